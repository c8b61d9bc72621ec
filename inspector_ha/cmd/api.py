"""``inspector-ha-api``: a stateless API process (or use ``wsgi.py``).

SIGTERM drains: ``/healthcheck`` fails for ``[api] drain_time`` while
requests are still served, then the listener closes, the requests in
flight finish, and the process exits 0.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from inspector_ha.api import app as api_app
from inspector_ha.api import auth
from inspector_ha.api import health
from inspector_ha.api import server
from inspector_ha.cmd import common
from inspector_ha import service as service_mod

if TYPE_CHECKING:
    from oslo_config import cfg


def main(argv: list[str] | None = None) -> int:
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    return serve(conf)


def _built(conf: cfg.ConfigOpts, router: health.Router, all_in_one: bool
           ) -> tuple[service_mod.Service, health.Probes]:
    """The service and its health probes, mounted on ``router``."""
    if all_in_one:
        # NOTE: imported only here: alembic brings mako (and pygments,
        # where installed), about 8 MB of RSS an API process never uses.
        from inspector_ha.db import migration
        migration.upgrade(conf.database.connection)
    service = service_mod.Service(conf)
    probes = health.Probes.for_backends(
        conf, service.store, service.coordinator if all_in_one else None)
    api_app.mount(router, service, probes)
    return service, probes


def serve(conf: cfg.ConfigOpts, all_in_one: bool = False) -> int:
    """Serve the API until stopped; the exit status.

    The listener binds before any backend is touched. ``all_in_one``
    (``inspector-ha``) also migrates the database and runs workers and
    periodic work in this process.
    """
    liveness = health.Liveness(
        conf.api.drain_time + conf.api.shutdown_timeout + 10)
    router = health.Router({health.LIVE_PATH: liveness})
    listener = common.listen(conf, router)
    try:
        service, probes = _built(conf, router, all_in_one)
    except auth.NotConfigured as exc:
        listener.stop()
        common.fail(str(exc))
    except BaseException:
        # NOTE: a process that failed to start exits (with the error
        # logged) rather than keep its bound listener's threads.
        listener.stop()
        raise
    common.on_signals(server.Drain(probes, listener, service.stop,
                                   conf.api.drain_time), conf)
    if common.start(service, workers=all_in_one,
                    periodic_jobs=all_in_one) is not None:
        return 1
    common.ready(listener)
    liveness.beat_until(service.stop)
    listener.stop()
    service.shutdown()
    return 1 if service.failure else 0


if __name__ == '__main__':
    sys.exit(main())
