"""validate_interfaces: interfaces, MACs, BMC addresses and ports.

The interface address is its IPv4 address, else its IPv6 one (without a
``%zone``); loopback interfaces are skipped. Ports: created for the
selected interfaces (``add_ports``); unless ``keep_ports = all``, the
others are deleted, and with ``update_pxe_enabled`` the ``pxe_enabled``
of existing ports is set to whether the node booted from them. Ports of
a node that is ``active`` or in ``rescue`` are never deleted or changed.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import TYPE_CHECKING, Any

from inspector_ha.common import addresses
from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import base
from inspector_ha.processing import ramdisk_data

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)

ACTIVE_STATES = ironic_client.ACTIVE_STATES


class ValidateInterfacesHook(base.ProcessingHook):
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf)
        if (conf.processing.add_ports == 'disabled' and
                conf.processing.keep_ports == 'added'):
            raise ValueError('Configuration error: add_ports set to '
                             'disabled and keep_ports set to added. Please '
                             'change keep_ports to all.')

    def before_processing(self, data: dict[str, Any]) -> None:
        inventory = data.get('inventory')
        if not isinstance(inventory, dict) or not inventory.get(
                'interfaces') or not isinstance(inventory['interfaces'],
                                                list):
            raise base.HookError('The ramdisk sent no inventory with '
                                 'interfaces')
        _bmc(data, inventory)
        pxe_mac = ramdisk_data.pxe_mac_of(data)
        data['all_interfaces'] = _all_interfaces(inventory, pxe_mac)
        selected = self._select(data['all_interfaces'], pxe_mac)
        if not selected and self.conf.processing.add_ports != 'disabled':
            raise base.HookError('No suitable interfaces found in %s' %
                                 data['all_interfaces'])
        data['interfaces'] = selected
        data['macs'] = [i['mac'] for i in selected.values()]

    def _select(self, interfaces: dict[str, dict[str, Any]],
                pxe_mac: str | None) -> dict[str, dict[str, Any]]:
        mode = self.conf.processing.add_ports
        if mode == 'pxe' and pxe_mac:
            return {n: i for n, i in interfaces.items() if i['pxe']}
        if mode in ('pxe', 'active'):
            return {n: i for n, i in interfaces.items() if i.get('ip')}
        return dict(interfaces) if mode == 'all' else {}

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        processing = self.conf.processing
        selected = data.get('interfaces') or {}
        existing = set(node.known_macs)
        if processing.add_ports != 'disabled':
            for iface in selected.values():
                node.create_port(iface['mac'], pxe_enabled=iface['pxe'])
        state = getattr(node.node, 'provision_state', None)
        if state in ACTIVE_STATES:
            LOG.debug('Node %s is %s; not deleting or changing its ports',
                      node.uuid, state)
            return
        if processing.keep_ports != 'all':
            keep = set(ramdisk_data.lookup_macs(data)
                       if processing.keep_ports == 'present'
                       else data.get('macs') or [])
            for port in list(node.ports().values()):
                if port.address not in keep:
                    LOG.info('Node %s: deleting port %s, its MAC %s is not '
                             'in %s', node.uuid, port.id, port.address,
                             sorted(keep))
                    node.delete_port(port)
        if (processing.overwrite_existing and processing.update_pxe_enabled
                and existing & {i['mac'] for i in selected.values()}):
            _fix_pxe_enabled(node, selected)


def _fix_pxe_enabled(node: base.NodeContext,
                     selected: dict[str, dict[str, Any]]) -> None:
    ports = node.ports()
    for iface in selected.values():
        port = ports.get(iface['mac'])
        if port is None or port.id is None:
            continue
        if port.pxe_enabled != iface['pxe']:
            LOG.info('Node %s: setting pxe_enabled=%s on port %s to match '
                     'the data', node.uuid, iface['pxe'], port.address)
            node.patch_port(port, [{'op': 'add', 'path': '/pxe_enabled',
                                    'value': iface['pxe']}])


def _bmc(data: dict[str, Any], inventory: dict[str, Any]) -> None:
    text = ramdisk_data.text
    data['ipmi_address'] = text(inventory.get('bmc_address')) or \
        text(data.get('ipmi_address'))
    data['ipmi_v6address'] = (text(inventory.get('bmc_v6address')) or
                              '').split('%')[0] or None


def _all_interfaces(inventory: dict[str, Any], pxe_mac: str | None
                    ) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = {}
    for iface in inventory['interfaces']:
        if not isinstance(iface, dict):
            continue
        mac = str(iface.get('mac_address') or '').lower()
        name = ramdisk_data.text(iface.get('name'))
        address = _address(iface)
        if not name or name == 'lo' or not addresses.MAC.match(mac) or \
                _is_loopback(address):
            continue
        result[name] = {'ip': address, 'mac': mac,
                        'client_id': iface.get('client_id'),
                        'pxe': mac == pxe_mac}
    return result


def _address(iface: dict[str, Any]) -> str | None:
    """The IPv4 address, else the IPv6 one without its ``%zone``."""
    v6 = ramdisk_data.text(iface.get('ipv6_address'))
    return ramdisk_data.text(iface.get('ipv4_address')) or (
        v6.split('%')[0] if v6 else None)


def _is_loopback(address: Any) -> bool:
    try:
        return bool(address) and ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
