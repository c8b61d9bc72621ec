"""The capabilities and pci_devices hooks, which write
``properties/capabilities``, and the default hook list they are in."""

import json

import pytest

from inspector_ha.processing import pipeline
from inspector_ha.processing.hooks import capabilities
from inspector_ha.processing.hooks import pci_devices

import hooktools


@pytest.fixture
def conf():
    return hooktools.new_conf()


def _data(flags=('fpu', 'vmx', 'aes', 'pse'), boot_mode='uefi', pci=None):
    data = {'inventory': {'cpu': {'count': 2, 'flags': list(flags)},
                          'boot': {'current_boot_mode': boot_mode}}}
    if pci is not None:
        data['pci_devices'] = pci
    return data


def _caps(ironic):
    value = hooktools.patched(ironic).get('/properties/capabilities')
    return None if value is None else dict(
        item.split(':', 1) for item in value.split(','))


def test_the_default_hooks_are_upstreams_in_upstreams_order(conf):
    names = [type(h).__name__ for h in pipeline.Pipeline(conf).hooks]
    assert names == ['RamdiskErrorHook', 'RootDiskSelectionHook',
                     'SchedulerHook', 'ValidateInterfacesHook',
                     'CapabilitiesHook', 'PciDevicesHook']


def test_cpu_flags_become_capabilities_through_the_default_map(conf):
    ironic = hooktools.run(capabilities.CapabilitiesHook(conf), _data())
    assert _caps(ironic) == {'cpu_vt': 'true', 'cpu_aes': 'true',
                             'cpu_hugepages': 'true'}


def test_the_boot_mode_is_a_capability_only_when_configured(conf):
    conf.set_override('boot_mode', True, group='capabilities')
    ironic = hooktools.run(capabilities.CapabilitiesHook(conf),
                           _data(flags=()))
    assert _caps(ironic) == {'boot_mode': 'uefi'}


def test_a_configured_flag_map_replaces_the_default_one(conf):
    conf.set_override('cpu_flags', {'fpu': 'has_fpu'}, group='capabilities')
    ironic = hooktools.run(capabilities.CapabilitiesHook(conf), _data())
    assert _caps(ironic) == {'has_fpu': 'true'}


@pytest.mark.parametrize('inventory', [{}, {'cpu': {}}, {'cpu': None},
                                       {'cpu': {'flags': []}}])
def test_no_cpu_flags_writes_nothing(conf, inventory):
    ironic = hooktools.run(capabilities.CapabilitiesHook(conf),
                           {'inventory': inventory})
    assert ironic.calls == []


def test_existing_capabilities_are_kept_and_updated(conf):
    ironic = hooktools.run(capabilities.CapabilitiesHook(conf), _data(),
                           properties={'capabilities':
                                       'profile:compute,cpu_vt:false'})
    assert _caps(ironic) == {'profile': 'compute', 'cpu_vt': 'true',
                             'cpu_aes': 'true', 'cpu_hugepages': 'true'}


# pci_devices

GPU = {'vendor_id': '10de', 'product_id': '1eb8', 'name': 'gpu'}
NIC = {'vendor_id': '8086', 'product_id': '1572', 'name': 'x710'}


def _device(alias, bus):
    return {'vendor_id': alias['vendor_id'],
            'product_id': alias['product_id'], 'class': '030000',
            'revision': 'a1', 'bus': bus}


def _pci_hook(conf, *aliases):
    conf.set_override('alias', [a if isinstance(a, str) else json.dumps(a)
                                for a in aliases], group='pci_devices')
    return pci_devices.PciDevicesHook(conf)


def test_aliased_pci_devices_are_counted_into_capabilities(conf):
    hook = _pci_hook(conf, GPU, NIC)
    pci = [_device(GPU, '0000:01:00.0'), _device(GPU, '0000:02:00.0'),
           _device(NIC, '0000:03:00.0'),
           {'vendor_id': '1af4', 'product_id': '1000', 'bus': 'x'}]
    ironic = hooktools.run(hook, _data(pci=pci))
    assert _caps(ironic) == {'gpu': '2', 'x710': '1'}


@pytest.mark.parametrize('entry', [
    'not json', '[]', json.dumps({'vendor_id': '1', 'product_id': '2'}),
    json.dumps(dict(GPU, extra='x'))])
def test_a_malformed_alias_is_left_out_and_the_others_still_count(
        conf, entry):
    hook = _pci_hook(conf, entry, NIC)
    assert hook.aliases == {('8086', '1572'): 'x710'}


def test_no_pci_data_or_no_aliased_device_writes_nothing(conf):
    hook = _pci_hook(conf, GPU)
    assert hooktools.run(hook, _data()).calls == []
    assert hooktools.run(hook, _data(pci=[_device(NIC, 'b'), 'junk'])) \
        .calls == []


def test_capabilities_and_pci_devices_send_one_merged_patch(conf):
    ironic = hooktools.RecordingIronic()
    ctx = hooktools.context(ironic, properties={'capabilities': 'a:b'})
    data = _data(flags=['vmx'], pci=[_device(GPU, 'b')])
    capabilities.CapabilitiesHook(conf).before_update(data, ctx)
    _pci_hook(conf, GPU).before_update(data, ctx)
    hooktools.send(ironic, ctx)
    [patch] = ironic.written('patch_node')
    assert patch[1] == [{'op': 'add', 'path': '/properties/capabilities',
                         'value': 'a:b,cpu_vt:true,gpu:1'}]
