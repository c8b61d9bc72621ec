"""``inspector-ha-api``: a stateless API process (or use ``wsgi.py``)."""

import sys

from inspector_ha.api import app as api_app
from inspector_ha.cmd import common
from inspector_ha import service as service_mod


def main(argv=None):
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    service = service_mod.Service(conf)
    if not common.start(service, workers=False, periodic_tasks=False):
        return 1
    server = common.serve(conf, api_app.create_app(service))
    common.on_signals(service.stop.set)
    service.stop.wait()
    server.shutdown()
    service.shutdown()
    return 1 if service.failure else 0



if __name__ == '__main__':
    sys.exit(main())
