"""A compact parser of the LLDP TLVs upstream's ``lldp_basic`` handles.

Input is the ramdisk's ``[[tlv_type, "hex value"], ...]`` of one
interface; output is upstream's ``lldp_processed`` dictionary (keys such
as ``switch_chassis_id``, ``switch_port_vlans``). A single-valued name
keeps its first value; list-valued names collect every TLV. A TLV that
cannot be parsed is skipped with a warning, the others are kept.

Covered: the 802.1AB basic set (chassis id, port id, port description,
system name and description, system capabilities, management
addresses), the 802.1Q organisational TLVs (port VLAN id, port and
protocol VLAN, VLAN names, protocol identity, management VLAN id, link
aggregation) and the 802.3 ones for link aggregation and MTU. Not
covered: 802.3 MAC/PHY configuration (the MAU type tables).
"""

from __future__ import annotations

import ipaddress
import logging
import struct
from collections.abc import Iterable
from typing import Any

LOG = logging.getLogger(__name__)

CHASSIS_ID, PORT_ID, TTL, PORT_DESCRIPTION, SYSTEM_NAME, \
    SYSTEM_DESCRIPTION, CAPABILITIES, MGMT_ADDRESS = range(1, 9)
ORG_SPECIFIC = 127
DOT1_OUI, DOT3_OUI = b'\x00\x80\xc2', b'\x00\x12\x0f'

# Subtypes whose value is a MAC, a network address, or text; others are
# not parsed (upstream's tables).
CHASSIS_SUBTYPES = {1: 'text', 2: 'text', 3: 'text', 4: 'mac', 5: 'address',
                    6: 'text', 7: 'text'}
PORT_SUBTYPES = {1: 'text', 2: 'text', 3: 'mac', 4: 'address', 5: 'text',
                 7: 'text'}
# System capability bits, least significant first (bit 0 is "other").
CAPABILITY_NAMES = [None, 'Repeater', 'Bridge', 'WLAN', 'Router', 'Telephone',
                    'DOCSIS cable device', 'Station only', 'C-Vlan', 'S-Vlan',
                    'TPMR']


class Invalid(ValueError):
    pass


def raw_tlvs(data: dict[str, Any]) -> dict[str, list[Any]]:
    """``{interface name: TLV list}`` from ``lldp_raw`` (IPA's ``lldp``
    collector), else from the inventory interfaces' legacy ``lldp``."""
    raw = _section(data, 'lldp_raw')
    interfaces = _section(data, 'inventory').get('interfaces')
    result: dict[str, list[Any]] = {}
    for iface in interfaces if isinstance(interfaces, list) else ():
        name = iface.get('name') if isinstance(iface, dict) else None
        if not isinstance(name, str):
            continue
        tlvs = raw.get(name) or iface.get('lldp')
        if tlvs and isinstance(tlvs, list):
            result[name] = tlvs
    return result


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def parse(tlvs: Iterable[Any] | None) -> dict[str, Any]:
    """Parse one interface's TLVs into upstream's name/value pairs."""
    values: dict[str, Any] = {}
    for item in tlvs or ():
        try:
            tlv_type, hex_value = item
            _parse_tlv(int(tlv_type), bytes.fromhex(hex_value), values)
        except (Invalid, IndexError, TypeError, ValueError,
                struct.error) as exc:
            LOG.warning('Skipping LLDP TLV %r: %s', item, exc)
    return values


def _parse_tlv(tlv_type: int, value: bytes, values: dict[str, Any]
               ) -> None:
    if tlv_type in (CHASSIS_ID, PORT_ID):
        name, subtypes = (('switch_chassis_id', CHASSIS_SUBTYPES)
                          if tlv_type == CHASSIS_ID else
                          ('switch_port_id', PORT_SUBTYPES))
        _set(values, name, _identifier(value, subtypes))
    elif tlv_type in _TEXT:
        _set(values, _TEXT[tlv_type], _text(value))
    elif tlv_type == CAPABILITIES:
        supported, enabled = struct.unpack('!HH', value)
        _set(values, 'switch_capabilities_support', _bits(supported))
        _set(values, 'switch_capabilities_enabled', _bits(enabled))
    elif tlv_type == MGMT_ADDRESS:
        length = value[0]
        _append(values, 'switch_mgmt_addresses',
                _address(value[1:1 + length]))
    elif tlv_type == ORG_SPECIFIC:
        _parse_org(value[:3], value[3], value[4:], values)


_TEXT = {PORT_DESCRIPTION: 'switch_port_description',
         SYSTEM_NAME: 'switch_system_name',
         SYSTEM_DESCRIPTION: 'switch_system_description'}


def _parse_org(oui: bytes, subtype: int, value: bytes,
               values: dict[str, Any]) -> None:
    if oui == DOT1_OUI and subtype in _DOT1:
        _DOT1[subtype](value, values)
    elif (oui, subtype) == (DOT3_OUI, 3):
        _link_aggregation(value, values)
    elif (oui, subtype) == (DOT3_OUI, 4):
        _set(values, 'switch_port_mtu', _uint16(value))


def _port_vlan(value: bytes, values: dict[str, Any]) -> None:
    _set(values, 'switch_port_untagged_vlan_id', _uint16(value))


def _protocol_vlan(value: bytes, values: dict[str, Any]) -> None:
    flags, vlan = struct.unpack('!BH', value)
    _set(values, 'switch_port_protocol_vlan_enabled', bool(flags & 4))
    _set(values, 'switch_port_protocol_vlan_support', bool(flags & 2))
    _append(values, 'switch_port_protocol_vlan_ids', vlan)


def _vlan_name(value: bytes, values: dict[str, Any]) -> None:
    vlan, length = struct.unpack('!HB', value[:3])
    name = value[3:3 + length]
    if len(name) != length:
        raise Invalid('VLAN name shorter than its length')
    _append(values, 'switch_port_vlans',
            {'name': _text(name).rstrip('\x00'), 'id': vlan})


def _protocol_identity(value: bytes, values: dict[str, Any]) -> None:
    length = value[0]
    if len(value) < 1 + length:
        raise Invalid('protocol identity shorter than its length')
    _append(values, 'switch_protocol_identities',
            value[1:1 + length].hex())


def _management_vlan(value: bytes, values: dict[str, Any]) -> None:
    _set(values, 'switch_port_management_vlan_id', _uint16(value))


def _link_aggregation(value: bytes, values: dict[str, Any]) -> None:
    status, port = struct.unpack('!BI', value)
    _set(values, 'switch_port_link_aggregation_enabled', bool(status & 2))
    _set(values, 'switch_port_link_aggregation_support', bool(status & 1))
    _set(values, 'switch_port_link_aggregation_id', port)


_DOT1 = {1: _port_vlan, 2: _protocol_vlan, 3: _vlan_name,
         4: _protocol_identity, 6: _management_vlan, 7: _link_aggregation}


def _identifier(value: bytes, subtypes: dict[int, str]) -> str:
    kind = subtypes.get(value[0])
    if kind == 'mac':
        return _mac(value[1:])
    if kind == 'address':
        return _address(value[1:])
    if kind == 'text':
        return _text(value[1:])
    raise Invalid('unknown subtype %d' % value[0])


def _address(value: bytes) -> str:
    """An IANA address family byte and the address (IPv4, IPv6, MAC)."""
    family, address = value[0], value[1:]
    if family == 1 and len(address) == 4 or family == 2 and len(
            address) == 16:
        return str(ipaddress.ip_address(address))
    if family == 6:
        return _mac(address)
    raise Invalid('unsupported address family %d' % family)


def _mac(value: bytes) -> str:
    if len(value) != 6:
        raise Invalid('a MAC address has 6 bytes, not %d' % len(value))
    return ':'.join('%02x' % b for b in value)


def _text(value: bytes) -> str:
    return value.decode('utf-8')


def _uint16(value: bytes) -> int:
    return struct.unpack('!H', value)[0]


def _bits(mask: int) -> list[str]:
    return [name for bit, name in enumerate(CAPABILITY_NAMES)
            if name and mask & (1 << bit)]


def _set(values: dict[str, Any], name: str, value: Any) -> None:
    values.setdefault(name, value)


def _append(values: dict[str, Any], name: str, value: Any) -> None:
    values.setdefault(name, []).append(value)
