"""``/healthcheck``: oslo.middleware's healthcheck plus our backends.

The middleware runs the plugins named in ``[healthcheck] backends``
(default ``disable_by_file``, so an operator drains a host by creating
``[healthcheck] disable_by_file_path``) and always our own
``inspector_ha_backends`` plugin: one round trip to each backend the
process needs, and "draining" once a graceful stop began. Any failure
answers 503 naming what failed.

:class:`Router` is the one small WSGI app of a listener: the API process
mounts its Flask app behind it, a worker's ``[worker] health_port``
listener mounts only ``/healthcheck`` (and may mount ``/metrics``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oslo_middleware import healthcheck
from oslo_middleware.healthcheck import pluginbase

from inspector_ha.db import api as db_api
from inspector_ha.messaging import probe

if TYPE_CHECKING:
    from _typeshed.wsgi import (StartResponse, WSGIApplication,
                                WSGIEnvironment)
    from oslo_config import cfg

    from inspector_ha.coordination import tooz_backend

PATH = '/healthcheck'
#: Liveness: whether the process itself is alive, whatever its backends
#: do (a Kubernetes ``livenessProbe``); ``PATH`` is readiness.
LIVE_PATH = '/livez'
PLUGIN = 'inspector_ha_backends'
#: Key of the :class:`Probes` in the middleware's local configuration.
PROBES_KEY = 'inspector_ha_probes'


class Probes:
    """One round trip to each backend; results cached for ``ttl`` seconds
    so that many checkers cost the backends little."""

    def __init__(self, checks: Sequence[tuple[str, Callable[[], object]]],
                 ttl: float = 1.0) -> None:
        self.draining = threading.Event()
        self._checks = checks
        self._ttl = ttl
        self._lock = threading.Lock()
        self._cached: tuple[float, list[tuple[str, str | None]]] = (
            float('-inf'), [])

    @classmethod
    def for_backends(cls, conf: cfg.ConfigOpts, store: db_api.Store,
                     coordinator: tooz_backend.Coordinator | None = None
                     ) -> Probes:
        """The database and the broker of ``conf``; plus coordination
        when a ``coordinator`` is given."""
        checks: list[tuple[str, Callable[[], object]]] = [
            (db_api.BACKEND, store.ping)]
        broker = probe.broker_probe(conf, conf.queue.probe_timeout)
        if broker is not None:
            checks.append(('broker', broker))
        if coordinator is not None:
            checks.append(('coordination',
                           lambda: coordinator.ping(timeout=5)))
        return cls(checks)

    def failures(self) -> list[tuple[str, str | None]]:
        """``[(name, error)]`` of the backends that did not answer."""
        with self._lock:
            stamp, failures = self._cached
            if time.monotonic() - stamp >= self._ttl:
                failures = [(name, _error(check))
                            for name, check in self._checks]
                failures = [(n, e) for n, e in failures if e is not None]
                self._cached = (time.monotonic(), failures)
            return failures


def _error(check: Callable[[], object]) -> str | None:
    try:
        check()
        return None
    except Exception as exc:
        return str(exc).splitlines()[0] if str(exc) else repr(exc)


class BackendsCheck(pluginbase.HealthcheckBaseExtension):
    """The ``inspector_ha_backends`` plugin (an entry point of
    ``oslo.middleware.healthcheck``); its :class:`Probes` come in the
    middleware's local configuration."""

    def __init__(self, oslo_conf: cfg.ConfigOpts,
                 conf: dict[str, Any]) -> None:
        super().__init__(oslo_conf, conf)
        self._probes = conf[PROBES_KEY]

    def healthcheck(self, server_port: int
                    ) -> pluginbase.HealthcheckResult:
        if self._probes.draining.is_set():
            return pluginbase.HealthcheckResult(False, 'draining')
        failures = self._probes.failures()
        if failures:
            return pluginbase.HealthcheckResult(False, '; '.join(
                '%s unavailable: %s' % f for f in failures))
        return pluginbase.HealthcheckResult(True, 'OK')


def middleware(conf: cfg.ConfigOpts, probes: Probes) -> WSGIApplication:
    """The healthcheck WSGI app for ``conf`` and ``probes``.

    NOTE: oslo.middleware reads its options from the global ``cfg.CONF``
    when given a dict; ``cmd.common.load_config`` parses that one.
    """
    backends = list(conf.healthcheck.backends)
    if PLUGIN not in backends:
        backends.append(PLUGIN)
    return healthcheck.Healthcheck(not_found, {'backends': backends,
                                               PROBES_KEY: probes})


class Liveness:
    """``/livez``: 200 while the process's main loop beats, 503 once it
    has not for ``stall_after`` seconds (a shutdown that hangs).

    It never asks a backend: a backend outage makes ``/healthcheck``
    fail (not ready) and must not restart the process (a restart cannot
    bring a backend back, and every process would restart at once).
    """

    #: Seconds between two beats of a main loop.
    BEAT = 1.0

    def __init__(self, stall_after: float) -> None:
        self._stall_after = stall_after
        self._beat = time.monotonic()

    def beat(self) -> None:
        self._beat = time.monotonic()

    def beat_until(self, event: threading.Event) -> None:
        """The main loop's wait: beat until ``event`` is set."""
        while not event.wait(self.BEAT):
            self.beat()

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> list[bytes]:
        silent = time.monotonic() - self._beat
        if silent > self._stall_after:
            start_response('503 Service Unavailable',
                           [('Content-Type', 'text/plain')])
            return [b'stalled: no progress for %.0f s\n' % silent]
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'alive\n']


class Router:
    """Exact paths to WSGI apps; every other path to ``default``."""

    def __init__(self, routes: Mapping[str, WSGIApplication],
                 default: WSGIApplication | None = None) -> None:
        self.routes = dict(routes)
        self.default = default or not_found

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        app = self.routes.get(environ.get('PATH_INFO', ''), self.default)
        return app(environ, start_response)


def not_found(environ: WSGIEnvironment,
              start_response: StartResponse) -> list[bytes]:
    start_response('404 Not Found', [('Content-Type', 'text/plain')])
    return [b'Not Found\n']
