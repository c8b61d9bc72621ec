"""The shipped HAProxy file (etc/haproxy/inspector-ha.cfg): valid, checks
/healthcheck as documented, lets /v1/continue in only from the
provisioning networks, and keeps a polling client's connection open."""

import http.client
import http.server
import subprocess
import threading
import time

import requests

import backends
import haproxy


def test_the_shipped_file_is_valid_as_shipped():
    result = subprocess.run([haproxy.binary(), '-c', '-f', haproxy.SHIPPED],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_shipped_file_checks_healthcheck_2s_apart_3_falls_2_rises():
    text = haproxy.SHIPPED.read_text()
    for line in ('option httpchk GET /healthcheck',
                 'http-check expect status 200',
                 'default-server inter 2s fall 3 rise 2'):
        assert '    %s\n' % line in text


def test_continue_from_outside_the_provisioning_networks_is_403():
    proxy = haproxy.HAProxy(['http://127.0.0.1:9'],
                            provisioning=['192.0.2.0/24']).start()
    try:
        assert requests.post(proxy.url + '/v1/continue', json={},
                             timeout=10).status_code == 403
        # Everything else is passed on (to no server here: 503).
        assert requests.get(proxy.url + '/v1', timeout=10).status_code \
            == 503
    finally:
        proxy.stop()


def test_continue_from_a_provisioning_network_is_passed_on():
    proxy = haproxy.HAProxy(['http://127.0.0.1:9']).start()
    try:
        assert requests.post(proxy.url + '/v1/continue', json={},
                             timeout=10).status_code == 503
    finally:
        proxy.stop()


class _Answers200(http.server.BaseHTTPRequestHandler):
    """Any GET answered 200, kept alive (HTTP/1.1)."""

    protocol_version = 'HTTP/1.1'

    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-Length', '2')
        self.end_headers()
        self.wfile.write(b'{}')

    def log_message(self, *args):
        pass


def test_a_client_polling_every_10_s_keeps_its_connection():
    """ironic-inspector-client's ``--wait`` polls every 10 s on one kept
    connection; HAProxy closed it after ``timeout http-request`` (10 s)
    idle, racing the next poll (RemoteDisconnected, seen in CI)."""
    haproxy.binary()  # before the server: a skip leaves none running
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Answers200)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = haproxy.HAProxy(['http://127.0.0.1:%d' % server.server_port])
    proxy.start()
    client = http.client.HTTPConnection('127.0.0.1', proxy.port, timeout=10)
    try:
        backends.wait_for(proxy.all_up, 30)
        client.request('GET', '/v1/introspection/x')
        assert client.getresponse().read() == b'{}'
        first = client.sock
        time.sleep(11)
        client.request('GET', '/v1/introspection/x')
        assert client.getresponse().read() == b'{}'
        assert client.sock is first
    finally:
        client.close()
        proxy.stop()
        server.shutdown()
