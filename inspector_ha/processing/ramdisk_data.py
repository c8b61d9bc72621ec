"""What the core reads of a ramdisk's data: the MACs and BMC addresses
a node is looked up by, and the MAC it booted from.

``all_interfaces``, ``ipmi_address`` and ``ipmi_v6address`` are set by
the ``validate_interfaces`` hook as it checks the data (upstream's
mandatory default hook); the API and the ramdisk-log store read them
here, not from that plugin's module.
"""

from __future__ import annotations

from typing import Any

from inspector_ha.common import addresses


def lookup_macs(data: dict[str, Any]) -> list[str]:
    """The MACs of every usable interface of the data."""
    return [i['mac'] for i in (data.get('all_interfaces') or {}).values()]


def lookup_bmcs(data: dict[str, Any]) -> list[str]:
    """The BMC addresses of the data (IPv4, then IPv6), none of the
    placeholders a BMC-less machine reports."""
    return [a for a in (data.get('ipmi_address'), data.get('ipmi_v6address'))
            if a not in addresses.NO_BMC]


def pxe_mac_of(data: dict[str, Any]) -> str | None:
    """The MAC the machine booted from (``boot_interface``, or the
    inventory's ``pxe_interface``), lower-case, or None."""
    value = data.get('boot_interface') or \
        section(section(data, 'inventory'), 'boot').get('pxe_interface')
    if not isinstance(value, str):
        return None
    value = value.lower()
    if value.startswith('01-'):
        value = value[3:].replace('-', ':')
    return value if addresses.MAC.match(value) else None


def section(data: dict[str, Any], name: str) -> dict[str, Any]:
    """The object ``data[name]``, or ``{}`` when it is not one."""
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def text(value: object) -> str | None:
    """``value`` if it is a string, else None: data from the ramdisk is
    not trusted to have the types IPA sends."""
    return value if isinstance(value, str) else None
