"""The HTTP listener of a process: cheroot (as Ironic serves its API),
optional TLS, and the graceful stop.

:func:`listen` binds before any backend is touched, so a port in use or
a bad TLS file is reported before anything starts. :class:`Drain` is the
SIGTERM sequence of an API process: fail ``/healthcheck`` for ``[api]
drain_time`` while serving, close the listener, finish the requests in
flight (at most ``[api] shutdown_timeout``), then stop the service.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from typing import TYPE_CHECKING

from cheroot import wsgi
from cheroot.ssl import builtin

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication
    from oslo_config import cfg

    from inspector_ha.api import health

LOG = logging.getLogger(__name__)


class StartError(Exception):
    """The listener cannot start; the message is one line for the log."""


class Listener:
    """A bound cheroot server; :meth:`start` serves in a thread."""

    def __init__(self, server: wsgi.Server, scheme: str) -> None:
        self._server: wsgi.Server | None = server
        self._thread: threading.Thread | None = None
        self._stopping = threading.Lock()
        host, port = server.bind_addr[:2]
        self.port = port
        self.url = '%s://%s:%d/' % (
            scheme, '[%s]' % host if ':' in host else host, port)

    def start(self) -> Listener:
        assert self._server is not None  # NOTE: stop() clears it
        self._thread = threading.Thread(target=self._server.serve,
                                        name='http', daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close the listener and wait for the requests in flight (at
        most the server's ``shutdown_timeout``); idempotent. A listener
        never started is closed too: binding started its thread pool,
        whose threads would keep the process from exiting."""
        with self._stopping:
            if self._server is None:
                return
            self._server.stop()
            if self._thread is not None:
                self._thread.join(self._server.shutdown_timeout + 5)
            self._server = self._thread = None


def listen(app: WSGIApplication, address: str, port: int,
           threads: int = 10, backlog: int = 1024,
           shutdown_timeout: float = 30.0,
           tls: tuple[str, str] | None = None) -> Listener:
    """Bind ``address:port`` for ``app``; :class:`StartError` if it cannot.

    :param tls: ``(cert_file, key_file)`` or None.
    """
    server = wsgi.Server((address, port), app, numthreads=threads,
                         request_queue_size=backlog,
                         # NOTE: cheroot's stubs say int; it is a timeout.
                         shutdown_timeout=shutdown_timeout,  # type: ignore[arg-type]
                         server_name='inspector-ha')
    if tls is not None:
        server.ssl_adapter = _ssl_adapter(*tls)
    try:
        server.prepare()
    except OSError as exc:
        raise StartError('cannot listen on %s port %d: %s' % (
            address, port, _last_line(exc))) from None
    return Listener(server, 'https' if tls else 'http')


def api_listener(conf: cfg.ConfigOpts, app: WSGIApplication) -> Listener:
    """The API listener from ``[DEFAULT]``, ``[api]`` and ``[ssl]``."""
    tls = None
    if conf.use_ssl:
        tls = (conf.ssl.cert_file, conf.ssl.key_file)
    return listen(app, conf.listen_address, conf.listen_port,
                  conf.api.threads, conf.api.backlog,
                  conf.api.shutdown_timeout, tls)


def _ssl_adapter(cert_file: str,
                 key_file: str) -> builtin.BuiltinSSLAdapter:
    for option, path in (('cert_file', cert_file), ('key_file', key_file)):
        if not path:
            raise StartError('[DEFAULT] use_ssl is true but [ssl] %s is '
                             'not set' % option)
        if not os.access(path, os.R_OK):
            raise StartError('[ssl] %s %s is missing or unreadable' % (
                option, path))
    try:
        return builtin.BuiltinSSLAdapter(cert_file, key_file)
    except (ssl.SSLError, OSError) as exc:
        raise StartError('[ssl] cert_file %s / key_file %s: %s' % (
            cert_file, key_file, _last_line(exc))) from None


def _last_line(exc: BaseException) -> str:
    text = str(exc) or repr(exc)
    return text.strip().splitlines()[-1]


class Drain:
    """The graceful stop of an API process, run once in its own thread."""

    def __init__(self, probes: health.Probes, listener: Listener,
                 stop: threading.Event, drain_time: float) -> None:
        self._probes = probes
        self._listener = listener
        self._stop = stop
        self._drain_time = drain_time
        self._started = threading.Lock()

    def __call__(self) -> None:
        if not self._started.acquire(blocking=False):
            return
        self._probes.draining.set()
        LOG.info('Draining: /healthcheck fails for %.1f s, then the '
                 'listener closes', self._drain_time)
        # A failure (service.stop) ends the drain early.
        self._stop.wait(self._drain_time)
        self._listener.stop()
        LOG.info('Listener closed, requests in flight finished')
        self._stop.set()
