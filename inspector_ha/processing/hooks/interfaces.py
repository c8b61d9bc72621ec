"""validate_interfaces: interfaces, MACs, BMC addresses and ports."""

import re

from inspector_ha.processing import base

MAC_RE = re.compile(r'^([0-9a-f]{2}:){5}[0-9a-f]{2}$')
NO_BMC = ('', '0.0.0.0', '::', '::/0', None)


class ValidateInterfacesHook(base.ProcessingHook):
    def before_processing(self, data):
        inventory = data.get('inventory')
        if not isinstance(inventory, dict) or not inventory.get(
                'interfaces') or not isinstance(inventory['interfaces'],
                                                list):
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
        _section(_section(data, 'inventory'), 'boot').get('pxe_interface')
    if not isinstance(value, str):
        return None
    value = value.lower()
    if value.startswith('01-'):
        value = value[3:].replace('-', ':')
    return value if MAC_RE.match(value) else None


def _bmc(data, inventory):
    data['ipmi_address'] = _text(inventory.get('bmc_address')) or \
        _text(data.get('ipmi_address'))
    data['ipmi_v6address'] = (_text(inventory.get('bmc_v6address')) or
                              '').split('%')[0] or None


def _section(data, name):
    """The object ``data[name]``, or ``{}`` when it is not one."""
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _text(value):
    """``value`` if it is a string, else None: data from the ramdisk is
    not trusted to have the types IPA sends."""
    return value if isinstance(value, str) else None


def _all_interfaces(inventory, pxe_mac):
    result = {}
    for iface in inventory['interfaces']:
        if not isinstance(iface, dict):
            continue
        mac = str(iface.get('mac_address') or '').lower()
        name = _text(iface.get('name'))
        if not name or name == 'lo' or not MAC_RE.match(mac):
            continue
        result[name] = {'ip': iface.get('ipv4_address'), 'mac': mac,
                        'client_id': iface.get('client_id'),
                        'pxe': mac == pxe_mac}
    return result
