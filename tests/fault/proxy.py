"""A TCP proxy that can be switched to a black hole: a network partition
between one process and one backend, without root-only tools.

While blackholed, connections are still accepted and open ones stay open,
but not a byte is forwarded either way (data waits, unacknowledged by the
far end, like packets dropped by a partition). Healing forwards again what
waited, as TCP retransmission would after a partition heals.

    with Proxy(redis_port) as proxy:   # point the victim at proxy.port
        proxy.blackhole(); ...; proxy.heal()
"""

import socket
import threading

CHUNK = 65536


class Proxy:
    def __init__(self, target_port, target_host='127.0.0.1',
                 listen_host='127.0.0.1'):
        self._target = (target_host, target_port)
        self._open = threading.Event()
        self._open.set()
        self._closing = threading.Event()
        self._server = socket.create_server((listen_host, 0))
        self.port = self._server.getsockname()[1]
        self._sockets = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True,
                                        name='proxy-%d' % self.port)

    @property
    def blackholed(self):
        return not self._open.is_set()

    def start(self):
        self._thread.start()
        return self

    def blackhole(self):
        self._open.clear()

    def heal(self):
        self._open.set()

    def _accept(self):
        while not self._closing.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self._track(client)
            threading.Thread(target=self._connect, args=(client,),
                             daemon=True).start()

    def _connect(self, client):
        if not self._wait_open():
            return
        try:
            upstream = socket.create_connection(self._target, timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        self._track(upstream)
        for src, dst in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(src, dst),
                             daemon=True).start()

    def _pump(self, src, dst):
        try:
            while self._wait_open():
                data = src.recv(CHUNK)
                if not data or not self._wait_open():
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            _close(src)
            _close(dst)

    def _wait_open(self):
        """Block while blackholed; False once the proxy is closing."""
        while not self._open.wait(0.1):
            if self._closing.is_set():
                return False
        return not self._closing.is_set()

    def _track(self, sock):
        with self._lock:
            self._sockets.append(sock)

    def close(self):
        self._closing.set()
        self._open.set()
        _close(self._server)
        with self._lock:
            for sock in self._sockets:
                _close(sock)
        self._thread.join(5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.close()


def _close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
