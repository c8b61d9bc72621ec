"""Helpers for tests of how processes serve: systemd's notify socket, a
request held in flight, a self-signed certificate."""

import socket
import subprocess

import requests


class NotifySocket:
    """A datagram socket standing in for systemd's ``$NOTIFY_SOCKET``."""

    def __init__(self, path):
        self.path = str(path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(self.path)

    def receive(self, timeout):
        self._sock.settimeout(timeout)
        return self._sock.recv(4096).decode()

    def close(self):
        self._sock.close()


class HeldRequest:
    """A POST whose body is sent in two halves, so that it is in flight
    for as long as the test waits between :meth:`open` and :meth:`finish`.
    """

    def __init__(self, url, path='/v1/continue', body=b'{"x": 1}' * 64):
        host, port = url.split('//', 1)[1].rstrip('/').rsplit(':', 1)
        self._address = (host, int(port))
        self._path = path
        self._body = body

    def open(self):
        self._sock = socket.create_connection(self._address, timeout=60)
        half = len(self._body) // 2
        self._sock.sendall((
            'POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: '
            'application/json\r\nContent-Length: %d\r\nConnection: close'
            '\r\n\r\n' % (self._path, len(self._body))).encode()
            + self._body[:half])
        return self

    def finish(self):
        """Send the rest; return the status line of the answer."""
        self._sock.sendall(self._body[len(self._body) // 2:])
        answer = b''
        while b'\r\n' not in answer:
            chunk = self._sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        self._sock.close()
        return answer.split(b'\r\n', 1)[0].decode()


def self_signed(directory):
    """``(cert_file, key_file)`` for CN=127.0.0.1."""
    cert, key = directory / 'api.pem', directory / 'api.key'
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048',
                    '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1',
                    '-addext', 'subjectAltName=IP:127.0.0.1',
                    '-keyout', key, '-out', cert], check=True,
                   capture_output=True)
    return cert, key


def get(url, **kwargs):
    """The response, or None if nothing answered."""
    try:
        return requests.get(url, timeout=10, **kwargs)
    except requests.RequestException:
        return None
