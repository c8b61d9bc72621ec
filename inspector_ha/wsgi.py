"""WSGI entry point for any WSGI server: ``inspector_ha.wsgi:application``.

The configuration file is ``$INSPECTOR_HA_CONFIG_FILE`` or the default
``/etc/inspector-ha/inspector-ha.conf``.
"""

from inspector_ha.api import app as api_app
from inspector_ha.cmd import common
from inspector_ha import service as service_mod


def init_application(argv=()):
    conf = common.load_config(list(argv))
    service = service_mod.Service(conf)
    service.start(workers=False, periodic_tasks=False)
    return api_app.create_app(service)


application = init_application()
