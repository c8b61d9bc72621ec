"""physnet_cidr_map: ports' physical_network from their addresses."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from oslo_config import cfg

from inspector_ha.processing import base

if TYPE_CHECKING:
    #: A mapped CIDR, either family.
    _Network = ipaddress.IPv4Network | ipaddress.IPv6Network

LOG = logging.getLogger(__name__)

GROUP = 'port_physnet'

OPTS = [
    cfg.ListOpt('cidr_map', default=[],
                help='CIDR:physical network pairs, e.g. '
                     '10.10.10.0/24:physnet_a,2001:db8::/64:physnet_b: an '
                     'Ironic port whose interface has an address in the '
                     'CIDR gets that physical_network.'),
]


class PhysnetCidrMapHook(base.ProcessingHook):
    OPTIONS = [(GROUP, OPTS)]

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf)
        self.cidr_map = parse_cidr_map(conf.port_physnet.cidr_map)

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        if not self.cidr_map:
            return
        inventory = _inventory_interfaces(data)
        for name, iface in (data.get('all_interfaces') or {}).items():
            physnet = self.physnet(inventory.get(name) or {})
            if physnet is None:
                continue
            port = node.ports().get(iface['mac'])
            if port is None or port.physical_network == physnet:
                continue
            if port.physical_network and \
                    not self.conf.processing.overwrite_existing:
                continue
            node.patch_port(port, [{'op': 'add', 'path': '/physical_network',
                                    'value': physnet}])

    def physnet(self, iface: dict[str, Any]) -> str | None:
        """The physical network of the first of the interface's addresses
        (IPv4, then IPv6) inside a mapped CIDR, or None."""
        for key in ('ipv4_address', 'ipv6_address'):
            try:
                address = ipaddress.ip_address(
                    str(iface.get(key)).split('%')[0])
            except ValueError:
                continue
            for network, physnet in self.cidr_map:
                if address in network:
                    return physnet
        return None


def _inventory_interfaces(data: dict[str, Any]
                          ) -> dict[Any, dict[str, Any]]:
    inventory = data.get('inventory')
    interfaces = inventory.get('interfaces') if isinstance(
        inventory, dict) else None
    return {i.get('name'): i for i in interfaces or ()
            if isinstance(i, dict)} if isinstance(interfaces, list) else {}


def parse_cidr_map(entries: Iterable[str]) -> list[tuple[_Network, str]]:
    """``[(network, physnet)]`` from ``CIDR:physnet`` entries.

    :raises ValueError: a malformed entry (the hook then refuses to load).
    """
    result: list[tuple[_Network, str]] = []
    for entry in entries:
        cidr, sep, physnet = entry.rpartition(':')
        if not sep or not physnet:
            raise ValueError('[port_physnet] cidr_map entry %r is not '
                             'CIDR:physnet' % entry)
        result.append((ipaddress.ip_network(cidr, strict=False), physnet))
    return result
