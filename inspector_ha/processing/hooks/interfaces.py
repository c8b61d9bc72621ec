"""validate_interfaces: interfaces, MACs, BMC addresses and ports."""

import re

from inspector_ha.processing import base

MAC_RE = re.compile(r'^([0-9a-f]{2}:){5}[0-9a-f]{2}$')
NO_BMC = ('', '0.0.0.0', '::', '::/0', None)


class ValidateInterfacesHook(base.ProcessingHook):
    def before_processing(self, data):
        inventory = data.get('inventory')
        if not isinstance(inventory, dict) or not inventory.get(
                'interfaces'):
            raise base.HookError('The ramdisk sent no inventory with '
                                 'interfaces')
        _bmc(data, inventory)
        pxe_mac = pxe_mac_of(data)
        data['all_interfaces'] = _all_interfaces(inventory, pxe_mac)
        selected = self._select(data['all_interfaces'], pxe_mac)
        if not selected and self.conf.processing.add_ports != 'disabled':
            raise base.HookError('No suitable interfaces found in %s' %
                                 data['all_interfaces'])
        data['interfaces'] = selected
        data['macs'] = [i['mac'] for i in selected.values()]

    def _select(self, interfaces, pxe_mac):
        mode = self.conf.processing.add_ports
        if mode == 'pxe' and pxe_mac:
            return {n: i for n, i in interfaces.items() if i['pxe']}
        if mode in ('pxe', 'active'):
            return {n: i for n, i in interfaces.items() if i.get('ip')}
        return dict(interfaces) if mode == 'all' else {}

    def before_update(self, data, node):
        for iface in (data.get('interfaces') or {}).values():
            node.create_port(iface['mac'], pxe_enabled=iface['pxe'])


def lookup_macs(data):
    return [i['mac'] for i in (data.get('all_interfaces') or {}).values()]


def lookup_bmcs(data):
    return [a for a in (data.get('ipmi_address'), data.get('ipmi_v6address'))
            if a not in NO_BMC]


def pxe_mac_of(data):
    value = data.get('boot_interface') or \
        ((data.get('inventory') or {}).get('boot') or {}).get('pxe_interface')
    if not isinstance(value, str):
        return None
    value = value.lower()
    if value.startswith('01-'):
        value = value[3:].replace('-', ':')
    return value if MAC_RE.match(value) else None


def _bmc(data, inventory):
    data['ipmi_address'] = inventory.get('bmc_address') or \
        data.get('ipmi_address')
    data['ipmi_v6address'] = (inventory.get('bmc_v6address') or
                              '').split('%')[0] or None


def _all_interfaces(inventory, pxe_mac):
    result = {}
    for iface in inventory['interfaces']:
        mac = str(iface.get('mac_address') or '').lower()
        name = iface.get('name')
        if not name or name == 'lo' or not MAC_RE.match(mac):
            continue
        result[name] = {'ip': iface.get('ipv4_address'), 'mac': mac,
                        'client_id': iface.get('client_id'),
                        'pxe': mac == pxe_mac}
    return result
