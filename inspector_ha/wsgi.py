"""WSGI entry point for any WSGI server: ``inspector_ha.wsgi:application``.

The configuration file is ``$INSPECTOR_HA_CONFIG_FILE`` or the default
``/etc/inspector-ha/inspector-ha.conf``. ``/healthcheck`` is served as
by ``inspector-ha-api``; the WSGI server owns signals and draining.
"""

from __future__ import annotations

from collections.abc import Iterable

from inspector_ha.api import app as api_app
from inspector_ha.api import health
from inspector_ha.cmd import common
from inspector_ha import service as service_mod


def init_application(argv: Iterable[str] = ()) -> health.Router:
    conf = common.load_config(list(argv))
    service = service_mod.Service(conf)
    probes = health.Probes.for_backends(conf, service.store)
    service.start(workers=False, periodic_jobs=False)
    return api_app.mount(health.Router({}), service, probes)


application = init_application()
