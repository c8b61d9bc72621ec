"""The LLDP TLV parser, and the lldp_basic and local_link_connection hooks
that use it."""

import struct

import pytest

from inspector_ha.processing import lldp
from inspector_ha.processing.hooks import interfaces
from inspector_ha.processing.hooks import lldp_basic
from inspector_ha.processing.hooks import local_link_connection as llc

import hooktools

SWITCH_MAC = '00:1c:73:aa:bb:cc'
NIC_MAC, OTHER_MAC = '52:54:00:12:34:56', '52:54:00:12:34:57'
DOT1, DOT3 = '0080c2', '00120f'


@pytest.fixture
def conf():
    return hooktools.new_conf()


def tlv(tlv_type, payload):
    return [tlv_type, payload.hex() if isinstance(payload, bytes)
            else payload]


def org(oui, subtype, payload):
    return tlv(127, bytes.fromhex(oui) + bytes([subtype]) + payload)


def mac_bytes(mac):
    return bytes.fromhex(mac.replace(':', ''))


def switch_tlvs(port=b'\x05Ethernet1/7'):
    return [tlv(1, b'\x04' + mac_bytes(SWITCH_MAC)), tlv(2, port),
            tlv(3, b'\x00\x78'), tlv(4, b'uplink to rack 7'),
            tlv(5, b'tor-7'), tlv(6, b'Arista EOS'), tlv(0, b'')]


def test_the_basic_set_is_parsed_into_upstreams_names():
    assert lldp.parse(switch_tlvs()) == {
        'switch_chassis_id': SWITCH_MAC, 'switch_port_id': 'Ethernet1/7',
        'switch_port_description': 'uplink to rack 7',
        'switch_system_name': 'tor-7',
        'switch_system_description': 'Arista EOS'}


@pytest.mark.parametrize('payload,expected', [
    (b'\x03' + mac_bytes(SWITCH_MAC), SWITCH_MAC),
    (b'\x07local-42', 'local-42'), (b'\x01alias', 'alias'),
    (b'\x04\x01\xc0\x00\x02\x01', '192.0.2.1'),
    (b'\x04\x02' + bytes(15) + b'\x01', '::1')])
def test_port_ids_of_each_subtype_are_readable_text(payload, expected):
    assert lldp.parse([tlv(2, payload)]) == {'switch_port_id': expected}


def test_802_1_vlans_and_link_aggregation():
    tlvs = [org(DOT1, 1, struct.pack('!H', 100)),
            org(DOT1, 3, struct.pack('!HB', 100, 4) + b'prod'),
            org(DOT1, 3, struct.pack('!HB', 200, 7) + b'storage'),
            org(DOT1, 2, struct.pack('!BH', 6, 300)),
            org(DOT1, 4, b'\x02\x88\xcc'),
            org(DOT1, 6, struct.pack('!H', 10)),
            org(DOT1, 7, struct.pack('!BI', 3, 1001))]
    assert lldp.parse(tlvs) == {
        'switch_port_untagged_vlan_id': 100,
        'switch_port_vlans': [{'name': 'prod', 'id': 100},
                              {'name': 'storage', 'id': 200}],
        'switch_port_protocol_vlan_enabled': True,
        'switch_port_protocol_vlan_support': True,
        'switch_port_protocol_vlan_ids': [300],
        'switch_protocol_identities': ['88cc'],
        'switch_port_management_vlan_id': 10,
        'switch_port_link_aggregation_enabled': True,
        'switch_port_link_aggregation_support': True,
        'switch_port_link_aggregation_id': 1001}


def test_802_3_mtu_and_link_aggregation():
    tlvs = [org(DOT3, 4, struct.pack('!H', 9000)),
            org(DOT3, 3, struct.pack('!BI', 1, 7))]
    assert lldp.parse(tlvs) == {
        'switch_port_mtu': 9000,
        'switch_port_link_aggregation_enabled': False,
        'switch_port_link_aggregation_support': True,
        'switch_port_link_aggregation_id': 7}


def test_capabilities_and_management_addresses():
    tlvs = [tlv(7, struct.pack('!HH', 0x14, 0x04)),
            tlv(8, b'\x05\x01\x0a\x00\x00\x01' + bytes(6)),
            tlv(8, b'\x07\x06' + mac_bytes(SWITCH_MAC) + bytes(6))]
    assert lldp.parse(tlvs) == {
        'switch_capabilities_support': ['Bridge', 'Router'],
        'switch_capabilities_enabled': ['Bridge'],
        'switch_mgmt_addresses': ['10.0.0.1', SWITCH_MAC]}


@pytest.mark.parametrize('bad', [
    ['x'], [1], [1, 'zz'], [1, ''], [2, '06616263'], [1, '04aabb'],
    tlv(7, b'\x00\x04'), org(DOT1, 7, b'\x03\x00'),
    org(DOT1, 3, struct.pack('!HB', 1, 9) + b'short'),
    tlv(8, b'\x05\x09\x0a\x00\x00\x01'), [None, None], 'garbage'])
def test_a_malformed_tlv_is_skipped_and_the_others_are_kept(bad):
    parsed = lldp.parse([bad, tlv(5, b'tor-7')])
    assert parsed == {'switch_system_name': 'tor-7'}


def test_the_first_value_of_a_single_valued_name_wins():
    parsed = lldp.parse([tlv(5, b'first'), tlv(5, b'second')])
    assert parsed == {'switch_system_name': 'first'}


def test_unknown_tlvs_and_organisations_are_ignored():
    assert lldp.parse([tlv(99, b'\x01'), org('aabbcc', 1, b'\x01'),
                       org(DOT3, 1, b'\x03\x6c\x00\x00\x10')]) == {}


# lldp_basic

def _data(lldp_raw=None, legacy=None, macs=(NIC_MAC, OTHER_MAC)):
    inventory = {'interfaces': [
        {'name': 'eth%d' % i, 'mac_address': mac, 'ipv4_address': None}
        for i, mac in enumerate(macs)]}
    if legacy is not None:
        inventory['interfaces'][0]['lldp'] = legacy
    data = {'inventory': inventory}
    if lldp_raw is not None:
        data['lldp_raw'] = lldp_raw
    data['all_interfaces'] = {
        i['name']: {'mac': i['mac_address'], 'ip': None, 'pxe': False,
                    'client_id': None}
        for i in inventory['interfaces']}
    return data


def test_lldp_basic_stores_the_parsed_tlvs_per_interface(conf):
    data = _data(lldp_raw={'eth0': switch_tlvs(), 'eth9': switch_tlvs()})
    ironic = hooktools.run(lldp_basic.LLDPBasicHook(conf), data)
    assert data['all_interfaces']['eth0']['lldp_processed'][
        'switch_system_name'] == 'tor-7'
    assert 'lldp_processed' not in data['all_interfaces']['eth1']
    assert ironic.calls == []


def test_lldp_basic_reads_the_legacy_inventory_lldp_too(conf):
    data = _data(legacy=switch_tlvs())
    hooktools.run(lldp_basic.LLDPBasicHook(conf), data)
    assert data['all_interfaces']['eth0']['lldp_processed'][
        'switch_port_id'] == 'Ethernet1/7'


# local_link_connection

def _with_port(**port):
    ironic = hooktools.RecordingIronic()
    port_id = ironic.add_port(hooktools.UUID, NIC_MAC, **port)
    return ironic, port_id


def test_ports_get_switch_id_and_port_id_in_one_patch(conf):
    ironic, port_id = _with_port()
    hooktools.run(llc.LocalLinkConnectionHook(conf),
                  _data(lldp_raw={'eth0': switch_tlvs()}), ironic)
    assert ironic.written('patch_port') == [(port_id, [
        {'op': 'add', 'path': '/local_link_connection/switch_id',
         'value': SWITCH_MAC},
        {'op': 'add', 'path': '/local_link_connection/port_id',
         'value': 'Ethernet1/7'}])]
    assert ironic.written('ports') == [(hooktools.UUID,)]


def test_lldp_basic_results_are_used_before_the_raw_tlvs(conf):
    ironic, port_id = _with_port()
    data = _data(lldp_raw={'eth0': switch_tlvs()})
    data['all_interfaces']['eth0']['lldp_processed'] = {
        'switch_chassis_id': '00:00:5e:00:53:01', 'switch_port_id': 'p1'}
    hooktools.run(llc.LocalLinkConnectionHook(conf), data, ironic)
    [(_, operations)] = ironic.written('patch_port')
    assert [o['value'] for o in operations] == ['00:00:5e:00:53:01', 'p1']


def test_a_chassis_id_that_is_not_a_mac_is_not_a_switch_id(conf):
    ironic, port_id = _with_port()
    tlvs = [tlv(1, b'\x07tor-7-chassis'), tlv(2, b'\x05Ethernet1/7')]
    hooktools.run(llc.LocalLinkConnectionHook(conf),
                  _data(lldp_raw={'eth0': tlvs}), ironic)
    [(_, operations)] = ironic.written('patch_port')
    assert [o['path'] for o in operations] == [
        '/local_link_connection/port_id']


def test_existing_link_values_are_kept_unless_overwriting(conf):
    conf.set_override('overwrite_existing', False, group='processing')
    ironic, port_id = _with_port(
        local_link_connection={'port_id': 'set-by-operator'})
    hooktools.run(llc.LocalLinkConnectionHook(conf),
                  _data(lldp_raw={'eth0': switch_tlvs()}), ironic)
    [(_, operations)] = ironic.written('patch_port')
    assert [o['path'] for o in operations] == [
        '/local_link_connection/switch_id']


def test_interfaces_without_lldp_or_port_cost_no_ironic_call(conf):
    ironic = hooktools.RecordingIronic()
    hooktools.run(llc.LocalLinkConnectionHook(conf), _data(), ironic)
    assert ironic.calls == []
    hooktools.run(llc.LocalLinkConnectionHook(conf),
                  _data(lldp_raw={'eth0': switch_tlvs()}), ironic)
    assert [c[0] for c in ironic.calls] == ['ports']


def test_a_port_patch_ironic_refuses_does_not_fail_processing(conf):
    ironic, port_id = _with_port()
    ironic.refuse_port_patches = True
    hooktools.run(llc.LocalLinkConnectionHook(conf),
                  _data(lldp_raw={'eth0': switch_tlvs()}), ironic)
    assert len(ironic.written('patch_port')) == 1


def test_a_port_created_by_validate_interfaces_gets_its_link_too(conf):
    ironic = hooktools.RecordingIronic()
    ctx = hooktools.context(ironic)
    data = _data(lldp_raw={'eth0': switch_tlvs()})
    data['boot_interface'] = NIC_MAC
    interfaces.ValidateInterfacesHook(conf).before_processing(data)
    llc.LocalLinkConnectionHook(conf).before_update(data, ctx)
    interfaces.ValidateInterfacesHook(conf).before_update(data, ctx)
    llc.LocalLinkConnectionHook(conf).before_update(data, ctx)
    hooktools.send(ironic, ctx)
    assert [c[0] for c in ironic.calls] == [
        'ports', 'create_port', 'patch_port']
