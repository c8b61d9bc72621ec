"""Ethernet over InfiniBand: the MAC a node's DHCP packets really carry.

An EoIB interface learns, in ``/sys/class/net/<if>/eth/neighs``, lines
like ``EMAC=02:00:02:97:00:01 IMAC=97:fe:80:...:7c:fe:90:03:00:29:26:52``.
The IMAC ends with the node's InfiniBand GUID, which is also the last 8
bytes (23 characters) of the Ironic port's ``extra['client-id']``.
"""

from __future__ import annotations

import logging
import pathlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

LOG = logging.getLogger(__name__)
_GUID_LEN = 23
_NEIGH = re.compile(r'EMAC=([0-9a-f]{2}(?::[0-9a-f]{2}){5})\s+IMAC=(\S+)',
                    re.IGNORECASE)


def read_neighs(interface: str, sysfs_root: str = '/sys') -> dict[str, str]:
    """``{guid: emac}`` learnt by ``interface`` ({} if it is not EoIB)."""
    path = pathlib.Path(sysfs_root, 'class', 'net', interface, 'eth',
                        'neighs')
    try:
        text = path.read_text()
    except OSError:
        LOG.error('Interface %s is not Ethernet over InfiniBand; skipping',
                  interface)
        return {}
    return {imac[-_GUID_LEN:].lower(): emac.lower()
            for emac, imac in _NEIGH.findall(text)}


def macs_for_ports(ports: Iterable[Mapping[str, Any]],
                   interfaces: Iterable[str],
                   sysfs_root: str = '/sys') -> list[str]:
    """The MAC to filter for each port (``{'address', 'extra'}`` dicts):
    its EoIB EMAC when a neighbour matches its client-id, else its
    address."""
    guids: dict[str, str] = {}
    for interface in interfaces:
        guids.update(read_neighs(interface, sysfs_root))
    return [_mac(port, guids) for port in ports]


def _mac(port: Mapping[str, Any], guids: Mapping[str, str]) -> str:
    client_id = ((port.get('extra') or {}).get('client-id') or '').lower()
    emac = guids.get(client_id[-_GUID_LEN:]) if client_id else None
    return emac or port['address']
