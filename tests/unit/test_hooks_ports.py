"""validate_interfaces: keep_ports, update_pxe_enabled, IPv6 addresses
and the ports of active nodes (the functional test runs them against a
real Ironic)."""

import pytest

from inspector_ha.processing.hooks import interfaces

import hooktools

PXE, OTHER, GONE = '52:54:00:0a:00:01', '52:54:00:0a:00:02', \
    '52:54:00:0a:00:03'


def _data(**v6):
    return {'inventory': {'interfaces': [
        {'name': 'eth0', 'mac_address': PXE, 'ipv4_address': '10.0.0.5'},
        {'name': 'eth1', 'mac_address': OTHER, 'ipv4_address': None,
         'ipv6_address': v6.get('v6')},
        {'name': 'lo6', 'mac_address': '52:54:00:0a:00:09',
         'ipv6_address': '::1'}]},
        'boot_interface': PXE}


def _hook(**options):
    conf = hooktools.new_conf()
    for name, value in options.items():
        conf.set_override(name, value, group='processing')
    return interfaces.ValidateInterfacesHook(conf)


def _run(hook, ironic, data=None, state='manageable'):
    data = data or _data()
    hook.before_processing(data)
    known = [p['port'].address for p in ironic.ports_by_id.values()]
    ctx = hooktools.context(ironic, known_macs=known,
                            provision_state=state)
    hook.before_update(data, ctx)
    hooktools.send(ironic, ctx)
    return data


def _ironic(*macs, pxe_enabled=True):
    ironic = hooktools.RecordingIronic()
    ids = {mac: ironic.add_port(hooktools.UUID, mac,
                                pxe_enabled=pxe_enabled) for mac in macs}
    return ironic, ids


def _macs(ironic):
    return sorted(p['port'].address for p in ironic.ports_by_id.values())


@pytest.mark.parametrize('keep,expected', [
    ('all', [PXE, OTHER, GONE]), ('present', [PXE, OTHER]),
    ('added', [PXE])])
def test_keep_ports_deletes_the_ports_it_does_not_keep(keep, expected):
    ironic, _ = _ironic(OTHER, GONE)
    _run(_hook(keep_ports=keep, add_ports='pxe'), ironic)
    assert _macs(ironic) == sorted(expected)


def test_ports_of_an_active_or_rescued_node_are_never_deleted_or_changed():
    for state in ('active', 'rescue'):
        ironic, ids = _ironic(PXE, GONE, pxe_enabled=False)
        _run(_hook(keep_ports='added'), ironic, state=state)
        assert _macs(ironic) == [PXE, GONE]
        assert ironic.written('delete_port') == []
        assert ironic.written('patch_port') == []


def test_update_pxe_enabled_fixes_the_flag_of_existing_ports():
    ironic, ids = _ironic(PXE, pxe_enabled=False)
    _run(_hook(), ironic)
    assert ironic.written('patch_port') == [
        (ids[PXE], [{'op': 'add', 'path': '/pxe_enabled', 'value': True}])]


@pytest.mark.parametrize('options', [
    {'update_pxe_enabled': False}, {'overwrite_existing': False}])
def test_pxe_enabled_is_left_alone_when_disabled(options):
    ironic, _ = _ironic(PXE, pxe_enabled=False)
    _run(_hook(**options), ironic)
    assert ironic.written('patch_port') == []


def test_a_correct_pxe_enabled_flag_is_not_patched():
    ironic, _ = _ironic(PXE)
    _run(_hook(), ironic)
    assert ironic.written('patch_port') == []


def test_an_ipv6_address_is_the_address_when_there_is_no_ipv4():
    data = _run(_hook(add_ports='active'), _ironic()[0],
                _data(v6='fd00::5%eth1'))
    assert data['all_interfaces']['eth1']['ip'] == 'fd00::5'
    assert sorted(data['macs']) == [PXE, OTHER]
    assert 'lo6' not in data['all_interfaces']


def test_keep_ports_added_with_add_ports_disabled_refuses_to_load():
    with pytest.raises(ValueError, match='keep_ports'):
        _hook(add_ports='disabled', keep_ports='added')
