"""The port watcher: one elected member announces new Ironic ports.

Ironic 39 sends no port notifications (building its PortCRUDPayload
fails), so the black-list channel is fed by this watcher instead: a
singleton periodic task (see :mod:`inspector_ha.engine.leadership`) that
lists only the ports created after the last one it saw, which is one
small query, and announces each on the channel; every member adds it to
its black-list at once. The full periodic sync of every member repairs
anything missed (deletions included). Announcing twice does no harm.
"""

import logging

from inspector_ha.firewall import sources
from inspector_ha.ironic import client as ironic_client

LOG = logging.getLogger(__name__)


class PortWatcher:
    def __init__(self, bus):
        self._bus = bus
        self._primed = False
        self._last = None

    def __call__(self, service, fence):
        """Announce the ports created since the last run (the first run
        of a leadership only finds where to start)."""
        try:
            new = sources.ironic_ports(service, after=self._last)
        except ironic_client.NotFound:
            LOG.info('Port %s is gone; listing all ports again',
                     self._last)
            self._primed, self._last = False, None
            return
        if self._primed:
            for port_id, mac in new:
                self._bus.blacklist('add', port_id, mac)
        self._primed = True
        if new:
            self._last = new[-1][0]
