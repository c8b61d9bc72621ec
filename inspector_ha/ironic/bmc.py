"""The addresses of a node's BMC, as lookup and the enroll hook match
them against what a ramdisk reports."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any, cast
from urllib import parse

from inspector_ha.common import addresses


def bmc_addresses(node: Any, address_fields: Iterable[str]) -> list[str]:
    """The IPv4/IPv6 addresses of the node's BMC: the first of
    ``ipmi_address`` and ``address_fields`` set in its driver_info,
    resolved; none when bridged or a placeholder."""
    info = node.driver_info or {}
    fields = ['ipmi_address'] + list(address_fields)
    value = next((info[f] for f in fields if info.get(f)), None)
    if not value or info.get('ipmi_bridging', 'no') != 'no':
        return []
    return [a for a in _resolve(_host_of(str(value)))
            if a not in addresses.NO_BMC]


def _host_of(value: str) -> str:
    if '//' in value:
        value = parse.urlparse(value).hostname or ''
    return value.strip('[]')


def _resolve(host: str) -> list[str]:
    try:
        address = ipaddress.ip_address(host)
        return [] if address.is_loopback else [str(address)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    # NOTE: cast: an IPv4/IPv6 host is a str; typeshed also allows an int.
    return sorted({cast(str, info[4][0]) for info in infos
                   if not ipaddress.ip_address(info[4][0]).is_loopback})
