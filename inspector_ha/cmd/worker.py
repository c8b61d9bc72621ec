"""``inspector-ha-worker``: a pool of workers plus periodic work.

Exits 0 after SIGTERM, non-zero when a backend stayed unreachable for the
whole retry budget (a supervisor restarts it). With ``[worker]
health_port`` it also serves ``/healthcheck`` (database, broker,
coordination) and ``/metrics`` on a small listener of its own;
``[metrics] port`` serves ``/metrics`` alone.
"""

from __future__ import annotations

import sys

from inspector_ha.api import health
from inspector_ha.cmd import common
from inspector_ha.common import metrics
from inspector_ha import service as service_mod


def main(argv: list[str] | None = None) -> int:
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    router = health.Router({})
    listener = common.health_listener(conf, router)
    service = service_mod.Service(conf)
    probes = health.Probes.for_backends(
        conf, service.store, service.coordinator)
    router.routes[health.PATH] = health.middleware(conf, probes)
    if conf.metrics.enabled:
        router.routes[metrics.PATH] = metrics.app()
    common.on_signals(service.stop.set, conf)
    if not common.start(service, workers=True, periodic_jobs=True):
        return 1
    if not common.serve_metrics(conf):
        service.shutdown()
        return 1
    print('inspector-ha worker %s started with %d threads' % (
        service.member_id, conf.worker.pool_size), flush=True)
    common.ready(listener, 'worker health')
    service.stop.wait()
    probes.draining.set()
    service.shutdown()
    if listener is not None:
        listener.stop()
    return 1 if service.failure else 0


if __name__ == '__main__':
    sys.exit(main())
