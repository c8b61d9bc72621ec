"""``inspector-ha-worker``: a pool of workers plus periodic work.

Exits 0 after SIGTERM, non-zero when a backend stayed unreachable for the
whole retry budget (a supervisor restarts it).
"""

import sys

from inspector_ha.cmd import common
from inspector_ha import service as service_mod


def main(argv=None):
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    service = service_mod.Service(conf)
    common.on_signals(service.stop.set)
    if not common.start(service, workers=True, periodic_tasks=True):
        return 1
    print('inspector-ha worker %s started with %d threads' % (
        service.member_id, conf.worker.pool_size), flush=True)
    service.stop.wait()
    service.shutdown()
    return 1 if service.failure else 0



if __name__ == '__main__':
    sys.exit(main())
