"""Helpers of the tests that play a small HTTP server (an Ironic that
answers a few calls): a handler that answers JSON quietly, and a server
run on a thread of its own for the length of a ``with`` block."""

import contextlib
import http.server
import json
import threading


class JsonHandler(http.server.BaseHTTPRequestHandler):
    """A request handler whose :meth:`reply` answers JSON and which logs
    nothing."""

    def reply(self, code, body):
        """Answer ``code`` with ``body`` as JSON."""
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(handler):
    """A threading HTTP server of ``handler`` on a free loopback port,
    serving until the block ends; yields its base URL."""
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield 'http://127.0.0.1:%d' % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
