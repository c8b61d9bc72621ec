"""``inspector-ha``: API, workers and periodic work in one process."""

import sys

from inspector_ha.api import app as api_app
from inspector_ha.api import health
from inspector_ha.api import server
from inspector_ha.cmd import common
from inspector_ha.db import migration
from inspector_ha import service as service_mod


def main(argv=None):
    conf = common.load_config(sys.argv[1:] if argv is None else argv,
                              allow_embedded=True)
    router = health.Router({})
    listener = common.listen(conf, router)
    migration.upgrade(conf.database.connection)
    service = service_mod.Service(conf)
    probes = health.Probes.for_service(service, coordination=True)
    api_app.mount(router, service, probes)
    common.on_signals(server.Drain(probes, listener, service.stop,
                                   conf.api.drain_time), conf)
    if not common.start(service, workers=True, periodic_tasks=True):
        return 1
    common.ready(listener)
    service.stop.wait()
    listener.stop()
    service.shutdown()
    return 1 if service.failure else 0


if __name__ == '__main__':
    sys.exit(main())
