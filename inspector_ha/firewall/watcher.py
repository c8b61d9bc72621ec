"""The port watcher and the black-list lister: elected members that
list Ironic's ports for the whole cluster.

Ironic 39 sends no port notifications (building its PortCRUDPayload
fails), so the black-list channel is fed by this watcher instead: a
singleton periodic job (see :mod:`inspector_ha.engine.leadership`) that
lists only the ports created after the last one it saw, which is one
small query, and announces each on the channel; every member adds it to
its black-list at once. The full periodic sync of every member repairs
anything missed (deletions included). Announcing twice does no harm.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from inspector_ha.firewall import bus as bus_mod
from inspector_ha.ironic import client as ironic_client

#: ``list_ports(after=port_id)``: ``[(port_id, mac)]``.
ListPorts = Callable[..., list[tuple[str, str]]]

LOG = logging.getLogger(__name__)


class PortWatcher:
    """A periodic job: ``list_ports(after=port_id)`` is
    :func:`inspector_ha.firewall.sources.ironic_ports` bound to the Ironic
    client; what it finds is announced on ``bus``."""

    def __init__(self, bus: bus_mod.Bus, list_ports: ListPorts) -> None:
        self._bus = bus
        self._list_ports = list_ports
        self._primed = False
        self._last: str | None = None

    def __call__(self, _fence: Any) -> None:
        """Announce the ports created since the last run (the first run
        of a leadership only finds where to start); it writes nothing,
        so it needs no fence."""
        try:
            new = self._list_ports(after=self._last)
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


class BlacklistLister:
    """A periodic job of one elected member: list every Ironic port and
    announce the whole black-list on ``bus``. While its announcements
    come, the other members follow them instead of each listing Ironic
    (:class:`inspector_ha.firewall.manager.BlacklistSync`): one listing
    per period for the whole cluster. ``list_ports()`` is
    :func:`inspector_ha.firewall.sources.ironic_ports` bound to the
    Ironic client."""

    def __init__(self, bus: bus_mod.Bus, list_ports: ListPorts) -> None:
        self._bus = bus
        self._list_ports = list_ports

    def __call__(self, _fence: Any) -> None:
        """It writes nothing, so it needs no fence."""
        self._bus.blacklist_snapshot(dict(self._list_ports()))
