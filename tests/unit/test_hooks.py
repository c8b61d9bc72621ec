"""Processing hooks and the pipeline, with Ironic's side recorded.

Ironic is a remote peer: here a recorder stands in for the facade's two
write calls; the functional tests run the hooks against a real Ironic.
"""

import copy
import types

from oslo_config import cfg
import pytest

from inspector_ha import conf as conf_mod
from inspector_ha.processing import base
from inspector_ha.processing import pipeline
from inspector_ha.processing import ramdisk_data
from inspector_ha.processing.hooks import interfaces
from inspector_ha.processing.hooks import ramdisk_error
from inspector_ha.processing.hooks import root_disk
from inspector_ha.processing.hooks import scheduler
import hooktools

GiB = 1024 ** 3
UUID = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
PXE, ACTIVE, IDLE = '11:22:33:44:55:66', '11:22:33:44:55:77', \
    '11:22:33:44:55:88'

INVENTORY = {
    'interfaces': [
        {'name': 'eth0', 'mac_address': PXE.upper(),
         'ipv4_address': '10.0.0.5'},
        {'name': 'eth1', 'mac_address': ACTIVE, 'ipv4_address': '10.0.1.5'},
        {'name': 'eth2', 'mac_address': IDLE, 'ipv4_address': None},
        {'name': 'lo', 'mac_address': '00:00:00:00:00:01',
         'ipv4_address': '127.0.0.1'},
        {'name': 'ib0', 'mac_address': 'not-a-mac'},
        {'name': 'eth3', 'mac_address': '11:22:33:44:55'},
        {'name': 'eth4', 'mac_address': None},
        {'mac_address': '11:22:33:44:55:99'},
    ],
    'bmc_address': '192.168.0.10', 'bmc_v6address': 'fe80::1%eth0',
    'cpu': {'count': 8, 'architecture': 'x86_64'},
    'memory': {'physical_mb': 16384},
    'disks': [{'name': '/dev/sda', 'size': 50 * GiB},
              {'name': '/dev/sdb', 'size': 200 * GiB}],
}


class RecordingIronic:
    def __init__(self):
        self.calls = []

    def patch_node(self, uuid, patch, reset_interfaces=None):
        if patch:
            self.calls.append(('patch_node', uuid, list(patch)))

    def create_port(self, uuid, address, pxe_enabled=True, extra=None):
        self.calls.append(('create_port', uuid, address, pxe_enabled))
        return 'port-' + address


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='inspector-ha', default_config_files=[])
    return conf


def _data(**extra):
    data = {'inventory': copy.deepcopy(INVENTORY),
            'boot_interface': '01-' + PXE.replace(':', '-').upper()}
    data.update(extra)
    return data


def _context(ironic, properties=None, known_macs=()):
    node = types.SimpleNamespace(id=UUID, properties=properties or {})
    return base.NodeContext(ironic, node, known_macs)


def _hook(conf, cls=interfaces.ValidateInterfacesHook):
    return cls(conf)


def _patched(ironic):
    return {p['path']: p['value'] for call in ironic.calls
            if call[0] == 'patch_node' for p in call[2]}


# validate_interfaces

@pytest.mark.parametrize('value,expected', [
    ('01-AA-BB-CC-DD-EE-FF', 'aa:bb:cc:dd:ee:ff'),
    ('aa:bb:cc:dd:ee:ff', 'aa:bb:cc:dd:ee:ff'),
    ('AA:BB:CC:DD:EE:FF', 'aa:bb:cc:dd:ee:ff'),
    ('01-aa-bb-cc', None), ('eth0', None), (None, None), (42, None)])
def test_the_pxe_mac_is_read_from_boot_interface(value, expected):
    assert ramdisk_data.pxe_mac_of({'boot_interface': value}) == expected


def test_the_pxe_mac_falls_back_to_the_inventory_boot_section():
    data = {'inventory': {'boot': {'pxe_interface': PXE.upper()}}}
    assert ramdisk_data.pxe_mac_of(data) == PXE


def test_all_interfaces_are_the_valid_ones_lower_cased_without_lo(conf):
    data = _data()
    _hook(conf).before_processing(data)
    assert data['all_interfaces'] == {
        'eth0': {'ip': '10.0.0.5', 'mac': PXE, 'client_id': None,
                 'pxe': True},
        'eth1': {'ip': '10.0.1.5', 'mac': ACTIVE, 'client_id': None,
                 'pxe': False},
        'eth2': {'ip': None, 'mac': IDLE, 'client_id': None, 'pxe': False}}
    assert sorted(ramdisk_data.lookup_macs(data)) == [PXE, ACTIVE, IDLE]


@pytest.mark.parametrize('mode,boot_interface,selected', [
    ('pxe', True, ['eth0']), ('pxe', False, ['eth0', 'eth1']),
    ('active', True, ['eth0', 'eth1']),
    ('all', True, ['eth0', 'eth1', 'eth2']), ('disabled', True, [])])
def test_add_ports_selects_the_interfaces_that_get_ports(
        conf, mode, boot_interface, selected):
    conf.set_override('add_ports', mode, group='processing')
    data = _data()
    if not boot_interface:
        del data['boot_interface']
    hook = _hook(conf)
    hook.before_processing(data)
    assert sorted(data['interfaces']) == selected
    assert sorted(data['macs']) == sorted(
        data['all_interfaces'][n]['mac'] for n in selected)
    ironic = RecordingIronic()
    context = _context(ironic)
    hook.before_update(data, context)
    hooktools.send(ironic, context)
    assert sorted(c[2] for c in ironic.calls) == sorted(data['macs'])


def test_ports_are_created_with_their_pxe_flag_and_only_once(conf):
    conf.set_override('add_ports', 'all', group='processing')
    conf.set_override('update_pxe_enabled', False, group='processing')
    data = _data()
    hook = _hook(conf)
    hook.before_processing(data)
    ironic = RecordingIronic()
    context = _context(ironic, known_macs=[IDLE])
    hook.before_update(data, context)
    hook.before_update(data, context)
    hooktools.send(ironic, context)
    assert sorted(ironic.calls) == [
        ('create_port', UUID, PXE, True),
        ('create_port', UUID, ACTIVE, False)]


@pytest.mark.parametrize('inventory', [
    None, {}, {'interfaces': []}, 'garbage'])
def test_no_interfaces_is_a_hook_error(conf, inventory):
    with pytest.raises(base.HookError):
        _hook(conf).before_processing({'inventory': inventory})


@pytest.mark.parametrize('interfaces_', ['AAA', {'eth0': {}}, 42])
def test_interfaces_that_are_not_a_list_are_a_hook_error(conf, interfaces_):
    with pytest.raises(base.HookError, match='no inventory with interfaces'):
        _hook(conf).before_processing(
            {'inventory': {'interfaces': interfaces_}})


@pytest.mark.parametrize('field,value', [
    ('boot', [None, None]), ('boot', 'pxe'), ('bmc_address', ['10.0.0.1']),
    ('bmc_v6address', 6), ('interfaces', ['eth0', None, 7]),
    ('interfaces', [{'name': ['eth0'], 'mac_address': PXE}])])
def test_ramdisk_values_of_the_wrong_type_are_ignored_not_a_crash(
        conf, field, value):
    # NOTE: schemathesis found these answered with 500 by /v1/continue.
    data = _data()
    del data['boot_interface']  # NOTE: so that inventory.boot is read
    data['inventory'][field] = value
    try:
        _hook(conf).before_processing(data)
    except base.HookError:
        pass
    found = ramdisk_data.lookup_bmcs(data) + ramdisk_data.lookup_macs(data)
    assert all(isinstance(value, str) for value in found)


def test_no_suitable_interface_is_a_hook_error(conf):
    data = _data(boot_interface='01-aa-aa-aa-aa-aa-aa')
    with pytest.raises(base.HookError, match='No suitable interfaces'):
        _hook(conf).before_processing(data)


def test_bmc_addresses_come_from_the_inventory_without_zone(conf):
    data = _data(ipmi_address='10.9.9.9')
    _hook(conf).before_processing(data)
    assert data['ipmi_address'] == '192.168.0.10'
    assert data['ipmi_v6address'] == 'fe80::1'
    assert ramdisk_data.lookup_bmcs(data) == ['192.168.0.10', 'fe80::1']


def test_null_bmc_addresses_are_not_looked_up(conf):
    data = _data()
    data['inventory'].update(bmc_address='0.0.0.0', bmc_v6address='::/0')
    _hook(conf).before_processing(data)
    assert ramdisk_data.lookup_bmcs(data) == []


# ramdisk_error and the pipeline

def test_a_ramdisk_error_is_a_hook_error_with_its_text(conf):
    hook = _hook(conf, ramdisk_error.RamdiskErrorHook)
    with pytest.raises(base.HookError) as info:
        hook.before_processing({'error': 'disk on fire'})
    assert str(info.value) == 'Ramdisk reported error: disk on fire'


@pytest.mark.parametrize('error', [None, ''])
def test_no_ramdisk_error_passes(conf, error):
    _hook(conf, ramdisk_error.RamdiskErrorHook).before_processing(
        {'error': error})


def test_the_pipeline_collects_every_failure_and_runs_every_hook(conf):
    data = _data(error='disk on fire')
    failures = pipeline.Pipeline(conf).before_processing(data)
    assert failures == ['Ramdisk reported error: disk on fire']
    assert PXE in ramdisk_data.lookup_macs(data)


def test_an_unknown_hook_name_refuses_to_load(conf):
    conf.set_override('processing_hooks', 'ramdisk_error,nope',
                      group='processing')
    with pytest.raises(RuntimeError, match='nope'):
        pipeline.Pipeline(conf)


# scheduler and root_disk_selection, written through a NodeContext

def _update(conf, cls, data, properties=None):
    ironic = RecordingIronic()
    context = _context(ironic, properties)
    cls(conf).before_update(data, context)
    hooktools.send(ironic, context)
    return ironic


def test_the_scheduler_writes_cpus_arch_and_memory_as_strings(conf):
    data = _data()
    ironic = _update(conf, scheduler.SchedulerHook, data)
    assert [c[0] for c in ironic.calls] == ['patch_node']
    assert _patched(ironic) == {'/properties/cpus': '8',
                                '/properties/cpu_arch': 'x86_64',
                                '/properties/memory_mb': '16384'}
    assert all(p['op'] == 'add' for p in ironic.calls[0][2])
    assert (data['cpus'], data['cpu_arch'], data['memory_mb']) == (
        8, 'x86_64', 16384)


def test_the_scheduler_keeps_existing_values_unless_overwriting(conf):
    conf.set_override('overwrite_existing', False, group='processing')
    ironic = _update(conf, scheduler.SchedulerHook, _data(), {'cpus': '2'})
    assert '/properties/cpus' not in _patched(ironic)
    assert _patched(ironic)['/properties/memory_mb'] == '16384'


def test_missing_cpu_information_only_skips_those_values(conf):
    data = _data()
    data['inventory']['cpu'] = {'count': 'many'}
    assert _patched(_update(conf, scheduler.SchedulerHook, data)) == {
        '/properties/memory_mb': '16384'}


@pytest.mark.parametrize('spacing,root,expected', [
    (True, {'size': 100 * GiB}, '99'), (False, {'size': 100 * GiB}, '100'),
    (True, None, '0'), (True, 'no disks', '0')])
def test_root_disk_selection_writes_local_gb(conf, spacing, root,
                                             expected):
    conf.set_override('disk_partitioning_spacing', spacing,
                      group='processing')
    data = _data()
    if root == 'no disks':
        data['inventory']['disks'] = []
    elif root is not None:
        data['root_disk'] = root
    ironic = _update(conf, root_disk.RootDiskSelectionHook, data)
    assert _patched(ironic) == {'/properties/local_gb': expected}
    assert data['local_gb'] == int(expected)


def test_a_root_disk_smaller_than_a_gib_gives_zero_not_minus_one(conf):
    data = _data(root_disk={'size': GiB // 2})
    ironic = _update(conf, root_disk.RootDiskSelectionHook, data)
    assert _patched(ironic) == {'/properties/local_gb': '0'}


def test_a_node_context_sends_all_changes_in_one_patch(conf):
    ironic = RecordingIronic()
    context = _context(ironic, {'local_gb': '10'})
    context.set_property('cpus', '4')
    context.set_property('local_gb', '20', overwrite=False)
    context.set_property('memory_mb', '1024')
    hooktools.send(ironic, context)
    assert ironic.calls == [('patch_node', UUID, [
        {'op': 'add', 'path': '/properties/cpus', 'value': '4'},
        {'op': 'add', 'path': '/properties/memory_mb', 'value': '1024'}])]


def test_a_hook_tripping_over_malformed_data_is_a_failure_not_a_crash(conf):
    from inspector_ha.processing import base as hook_base
    from inspector_ha.processing import pipeline as pipeline_mod

    class Fragile(hook_base.ProcessingHook):
        def before_processing(self, data):
            return data['inventory']['cpu']['count'] + 1

    pipe = pipeline_mod.Pipeline(conf)
    pipe.hooks = [Fragile(conf)]
    failures = pipe.before_processing({'inventory': {'cpu': 'x'}})
    assert len(failures) == 1 and 'Malformed' in failures[0]
