"""The physnet_cidr_map hook: ports' physical_network from the CIDR of
their interface's address."""

import pytest

from inspector_ha.processing import pipeline
from inspector_ha.processing.hooks import physnet_cidr_map as physnet

import hooktools

MACS = ['52:54:00:00:00:01', '52:54:00:00:00:02', '52:54:00:00:00:03']


@pytest.fixture
def conf():
    conf = hooktools.new_conf()
    conf.set_override('cidr_map', ['10.10.0.0/16:storage',
                                   '2001:db8::/64:v6net',
                                   '10.20.30.0/24:provisioning'],
                      group='port_physnet')
    return conf


def _data(*addresses):
    inventory = {'interfaces': [
        dict({'name': 'eth%d' % i, 'mac_address': MACS[i]}, **address)
        for i, address in enumerate(addresses)]}
    return {'inventory': inventory, 'all_interfaces': {
        i['name']: {'mac': i['mac_address']}
        for i in inventory['interfaces']}}


def _ironic(*physnets):
    ironic = hooktools.RecordingIronic()
    ids = [ironic.add_port(hooktools.UUID, MACS[i], physical_network=p)
           for i, p in enumerate(physnets)]
    return ironic, ids


def _set(ironic):
    return {port_id: ops[0]['value']
            for port_id, ops in ironic.written('patch_port')}


def test_each_port_gets_the_physnet_of_its_address(conf):
    ironic, ids = _ironic(None, None, None)
    data = _data({'ipv4_address': '10.10.3.4'},
                 {'ipv4_address': '192.0.2.1',
                  'ipv6_address': '2001:db8::5'},
                 {'ipv4_address': '172.16.0.1'})
    hooktools.run(physnet.PhysnetCidrMapHook(conf), data, ironic)
    assert _set(ironic) == {ids[0]: 'storage', ids[1]: 'v6net'}
    assert ironic.written('patch_port')[0][1] == [
        {'op': 'add', 'path': '/physical_network', 'value': 'storage'}]


def test_a_port_that_already_has_the_physnet_is_not_patched(conf):
    ironic, ids = _ironic('storage')
    hooktools.run(physnet.PhysnetCidrMapHook(conf),
                  _data({'ipv4_address': '10.10.3.4'}), ironic)
    assert ironic.written('patch_port') == []


@pytest.mark.parametrize('overwrite,expected', [(True, 'storage'),
                                                (False, None)])
def test_another_physnet_is_replaced_only_when_overwriting(
        conf, overwrite, expected):
    conf.set_override('overwrite_existing', overwrite, group='processing')
    ironic, ids = _ironic('old')
    hooktools.run(physnet.PhysnetCidrMapHook(conf),
                  _data({'ipv4_address': '10.10.3.4'}), ironic)
    assert _set(ironic).get(ids[0]) == expected


def test_an_unset_physnet_is_set_even_without_overwriting(conf):
    conf.set_override('overwrite_existing', False, group='processing')
    ironic, ids = _ironic(None)
    hooktools.run(physnet.PhysnetCidrMapHook(conf),
                  _data({'ipv4_address': '10.20.30.9'}), ironic)
    assert _set(ironic) == {ids[0]: 'provisioning'}


def test_interfaces_without_a_port_or_a_mapped_address_are_skipped(conf):
    ironic = hooktools.RecordingIronic()
    hooktools.run(physnet.PhysnetCidrMapHook(conf),
                  _data({'ipv4_address': None}, {}), ironic)
    assert ironic.calls == []
    hooktools.run(physnet.PhysnetCidrMapHook(conf),
                  _data({'ipv4_address': '10.10.0.1'}), ironic)
    assert [c[0] for c in ironic.calls] == ['ports']


def test_an_empty_map_costs_no_ironic_call():
    ironic = hooktools.run(physnet.PhysnetCidrMapHook(hooktools.new_conf()),
                           _data({'ipv4_address': '10.10.3.4'}))
    assert ironic.calls == []


@pytest.mark.parametrize('entry', ['10.0.0.0/8', '10.0.0.0/8:',
                                   'nonsense:physnet'])
def test_a_malformed_map_stops_the_pipeline_from_loading(conf, entry):
    conf.set_override('cidr_map', [entry], group='port_physnet')
    conf.set_override('processing_hooks', 'physnet_cidr_map',
                      group='processing')
    with pytest.raises(RuntimeError, match='physnet_cidr_map'):
        pipeline.Pipeline(conf)
