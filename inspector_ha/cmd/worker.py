"""``inspector-ha-worker``: a pool of workers plus periodic work.

Exits 0 after SIGTERM, non-zero when the broker or the coordination
backend stayed unreachable for the whole retry budget (a supervisor
restarts it). A database gone for that long stops the service the same
way (the partition rule), but the process stays: it waits for the
database and starts a new service, as a new member, once it answers; a
restart could not bring the database back, and every worker would
restart at once. With ``[worker] health_port`` it also serves
``/healthcheck`` (readiness: database, broker, coordination), ``/livez``
(liveness) and ``/metrics`` on a small listener of its own; ``[metrics]
port`` serves ``/metrics`` alone.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import TYPE_CHECKING

from inspector_ha.api import health
from inspector_ha.cmd import common
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha import service as service_mod

if TYPE_CHECKING:
    from oslo_config import cfg

    from inspector_ha.api import server

LOG = logging.getLogger(__name__)


class _Process:
    """What outlives one service: the health listener, the signals, the
    liveness; :meth:`run` runs services one after another."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.terminated = threading.Event()
        self.liveness = health.Liveness(conf.worker.shutdown_timeout + 10)
        self.router = health.Router({health.LIVE_PATH: self.liveness})
        if conf.metrics.enabled:
            self.router.routes[metrics.PATH] = metrics.app()
        self.listener: server.Listener | None = common.health_listener(
            conf, self.router)
        self.service: service_mod.Service | None = None
        self.started = False

    def terminate(self) -> None:
        self.terminated.set()
        if self.service is not None:
            self.service.stop.set()

    def run(self) -> int:
        """Run services until SIGTERM or a failure other than the
        database's; the exit status."""
        common.on_signals(self.terminate, self.conf)
        while True:
            service = self._service()
            failure = self._serve(service)
            if self.terminated.is_set() or not _database_outage(failure):
                break
            if not self._wait_for_database(service):
                failure = None  # SIGTERM while waiting: a clean stop
                break
        if self.listener is not None:
            self.listener.stop()
        return 0 if failure is None else 1

    def _service(self) -> service_mod.Service:
        service = self.service = service_mod.Service(self.conf)
        if self.terminated.is_set():
            service.stop.set()
        return service

    def _serve(self, service: service_mod.Service) -> BaseException | None:
        """Start ``service``, serve until it stops, shut it down; its
        failure (or the one that kept it from starting), or None."""
        probes = health.Probes.for_backends(
            self.conf, service.store, service.coordinator)
        self.router.routes[health.PATH] = health.middleware(self.conf,
                                                            probes)
        unstarted = common.start(service, workers=True, periodic_jobs=True)
        if unstarted is not None:
            return None if isinstance(unstarted, retry.Interrupted) \
                else unstarted
        if not self.started:
            if not common.serve_metrics(self.conf):
                service.shutdown()
                return OSError('[metrics] port')
            self.started = True
            common.ready(self.listener, 'worker health')
        print('inspector-ha worker %s started with %d threads' % (
            service.member_id, self.conf.worker.pool_size), flush=True)
        self.liveness.beat_until(service.stop)
        probes.draining.set()
        service.shutdown()
        return service.failure

    def _wait_for_database(self, service: service_mod.Service) -> bool:
        """Wait (beating) until the database answers; False on SIGTERM."""
        LOG.warning('Waiting for the database to answer before starting '
                    'again; this process stays up (/livez 200, '
                    '/healthcheck 503)')
        self.router.routes[health.PATH] = health.middleware(
            self.conf, health.Probes.for_backends(self.conf, service.store))
        while not self.terminated.wait(self.conf.worker.watch_period):
            self.liveness.beat()
            try:
                service.store.ping()
            except Exception:
                continue
            service.store.dispose()
            LOG.warning('The database answers again: starting a new '
                        'member')
            return True
        return False


def _database_outage(failure: BaseException | None) -> bool:
    return (isinstance(failure, retry.BackendUnavailable) and
            failure.backend == db_api.BACKEND)


def main(argv: list[str] | None = None) -> int:
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    return _Process(conf).run()


if __name__ == '__main__':
    sys.exit(main())
