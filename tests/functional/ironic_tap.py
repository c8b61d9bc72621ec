"""An HTTP proxy in front of a real Ironic that counts the calls it
forwards and can run an action (SIGKILL a worker) at an exact call:
before it is forwarded, or after Ironic answered it and before the
caller hears the answer.

    with IronicTap(ironic.url) as tap:       # point workers at tap.url
        tap.arm('PATCH', '/v1/nodes/' + uuid, after=True, action=kill)
"""

import http.server
import re
import threading
import urllib.parse

import requests

HOP_BY_HOP = {'connection', 'keep-alive', 'transfer-encoding', 'te',
              'trailer', 'upgrade', 'proxy-authorization',
              'proxy-authenticate', 'content-length', 'content-encoding'}


class IronicTap:
    def __init__(self, target):
        self._target = target.rstrip('/')
        self.calls = []
        self._armed = []
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(
            ('127.0.0.1', 0), self._handler())
        self._server.daemon_threads = True
        self.url = 'http://127.0.0.1:%d' % self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True, name='ironic-tap')

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def arm(self, method, path_pattern, action, after=False, body=None):
        """Run ``action()`` once, at the first call matching ``method``,
        the regular expression ``path_pattern`` and, if given, containing
        ``body``: before forwarding it, or ``after`` Ironic answered."""
        with self._lock:
            self._armed.append((method, re.compile(path_pattern), body,
                                after, action))

    def count(self, method, path_pattern, body=None, query=None):
        """Calls forwarded so far matching ``method``, the regular
        expression ``path_pattern`` (the path without its query) and, if
        given, containing ``body`` and ``query`` in theirs."""
        pattern = re.compile(path_pattern)
        return sum(1 for m, p, b, q in list(self.calls)
                   if m == method and pattern.fullmatch(p)
                   and (body is None or body in b)
                   and (query is None or query in q))

    def _take(self, method, path, body, after):
        with self._lock:
            for item in self._armed:
                m, pattern, needle, when, action = item
                if (m == method and when == after and pattern.fullmatch(path)
                        and (needle is None or needle in body)):
                    self._armed.remove(item)
                    return action
        return None

    def _forward(self, method, path, headers, body):
        path_only, _, query = path.partition('?')
        self.calls.append((method, path_only, body.decode(errors='replace'),
                           urllib.parse.unquote(query)))
        return requests.request(method, self._target + path, data=body,
                                headers=headers, timeout=60)

    def _handler(self):
        tap = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def _any(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(length) if length else b''
                path = self.path.split('?')[0]
                text = body.decode(errors='replace')
                action = tap._take(self.command, path, text, False)
                if action is not None:
                    action()
                    self.close_connection = True
                    return
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in HOP_BY_HOP | {'host'}}
                answer = tap._forward(self.command, self.path, headers, body)
                action = tap._take(self.command, path, text, True)
                if action is not None:
                    action()
                try:
                    self._reply(answer)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # NOTE: the caller died

            def _reply(self, answer):
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header('Content-Length', str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, *args):
                pass

        return Handler
