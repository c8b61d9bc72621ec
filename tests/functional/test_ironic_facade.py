"""The Ironic facade's own REST calls against a real Ironic whose answers
the shared one never gives: a power interface it finds invalid (a
redfish node without an address) and port listings of several pages;
and a node read without openstacksdk's resources, compared with what
openstacksdk's own ``get_node`` shows of it."""

import json
import threading

import pytest
from oslo_config import cfg

import ironic_server
from inspector_ha.api import checks
from inspector_ha.api import errors
from inspector_ha import conf as conf_mod
from inspector_ha.ironic import client
from inspector_ha.ironic import node as node_mod
from inspector_ha.ironic import pacing as pacing_mod

#: Redfish beside fake-hardware (the defaults both support), and pages of
#: two: what the shared Ironic of the functional tests does not do.
REDFISH_AND_SMALL_PAGES = """
[DEFAULT]
enabled_hardware_types = fake-hardware,redfish
enabled_power_interfaces = fake,redfish
enabled_management_interfaces = fake,redfish
enabled_boot_interfaces = fake,pxe
enabled_deploy_interfaces = fake,ramdisk
enabled_inspect_interfaces = fake,no-inspect,redfish
default_inspect_interface = no-inspect
default_boot_interface = pxe
default_deploy_interface = ramdisk
[api]
max_limit = 2
"""
MACS = ['52:54:00:aa:00:01', '52:54:00:aa:00:02', '52:54:00:aa:00:03']
#: The ports of the listing tests' node (a MAC has one port in Ironic).
LISTED_MACS = ['52:54:00:bb:00:01', '52:54:00:bb:00:02', '52:54:00:bb:00:03']


@pytest.fixture(scope='module')
def odd_ironic(obtain_backend):
    server = ironic_server.Ironic(extra_conf=REDFISH_AND_SMALL_PAGES)
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()


@pytest.fixture
def facade(odd_ironic):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='inspector-ha', default_config_files=[])
    conf.set_override('auth_type', 'none', 'ironic')
    conf.set_override('endpoint_override', odd_ironic.url, 'ironic')
    conf.set_override('retry_count', 0, 'ironic')
    return client.connect(conf, threading.Event())


def test_a_node_ironic_finds_unpowerable_is_refused_with_ironics_reason(
        odd_ironic, facade):
    uuid = odd_ironic.request('POST', '/v1/nodes', expect=(201,),
                              json={'driver': 'redfish'})['uuid']
    with pytest.raises(errors.ApiError) as refused:
        checks.check_startable(facade, facade.get_node(uuid),
                               manage_boot=True, permit_active=False)
    message = str(refused.value)
    assert message.startswith('Failed validation of power interface: '
                              'Validation failed for required interfaces '
                              'of node %s: power (' % uuid), message
    assert 'redfish_address' in message


def test_a_fake_hardware_node_passes_the_same_check(odd_ironic, facade):
    uuid = odd_ironic.create_node()
    checks.check_startable(facade, facade.get_node(uuid), manage_boot=True,
                           permit_active=False)


def test_every_page_of_a_nodes_ports_is_read(odd_ironic, facade):
    uuid = odd_ironic.create_node(macs=MACS)
    assert sorted(facade.port_macs(uuid)) == MACS
    ports = facade.ports(uuid)
    assert sorted(p.address for p in ports) == MACS
    for port in ports:
        assert odd_ironic.request('GET', '/v1/ports/%s' % port.id)[
            'address'] == port.address
    assert all(p.pxe_enabled for p in ports)


def test_every_port_is_listed_in_creation_order_and_from_a_marker(
        odd_ironic, facade):
    uuid = odd_ironic.create_node(macs=LISTED_MACS)
    ports = [p for p in facade.all_ports() if p['address'] in LISTED_MACS]
    assert [p['address'] for p in ports] == LISTED_MACS
    assert all(p['extra'] == {} for p in ports)
    after_first = facade.all_ports(after=ports[0]['id'])
    assert [p['address'] for p in after_first][-2:] == LISTED_MACS[1:]
    assert ports[0]['id'] not in {p['id'] for p in after_first}
    odd_ironic.delete_node(uuid)
    with pytest.raises(client.NotFound):
        facade.all_ports(after=ports[0]['id'])


def test_every_node_uuid_is_listed_over_pages(odd_ironic, facade):
    made = {odd_ironic.create_node() for _ in range(3)}
    assert made <= facade.node_uuids()


def _sdk_node(facade, ident, fields=None):
    """The node as openstacksdk's own resource shows it."""
    return facade._adapter().get_node(ident, fields=fields)


def test_a_node_reads_as_openstacksdks_resource_shows_it(odd_ironic,
                                                         facade):
    uuid = odd_ironic.request('POST', '/v1/nodes', expect=(201,), json={
        'driver': 'fake-hardware', 'name': 'node.read-as-sdk',
        'driver_info': {'ipmi_address': '192.0.2.1'},
        'properties': {'cpu_arch': 'x86_64'}, 'extra': {'a': [1]}})['uuid']
    sdk = _sdk_node(facade, uuid)
    for ident in (uuid, 'node.read-as-sdk'):
        node = facade.get_node(ident)
        assert node.to_dict(computed=False) == sdk.to_dict(computed=False)
        assert (node.id, node.is_maintenance, node.provision_state) == (
            uuid, False, 'enroll')
        assert node['driver_info'] == {'ipmi_address': '192.0.2.1'}
        # NOTE: as a dict, and by Ironic's names, as openstacksdk's
        # resource reads (upstream-style plugins may do either).
        assert (node['uuid'], node.get('name')) == (uuid,
                                                    'node.read-as-sdk')
        assert 'driver_info' in node and 'maintenance' in node
        assert json.loads(json.dumps(node))['extra'] == {'a': [1]}


def test_a_node_read_with_fields_has_those_by_either_name(odd_ironic,
                                                          facade):
    uuid = odd_ironic.request('POST', '/v1/nodes', expect=(201,),
                              json={'driver': 'fake-hardware'})['uuid']
    for fields in (['power_state', 'target_power_state'],
                   ['uuid', 'provision_state'], ['id', 'is_maintenance']):
        node = facade.get_node(uuid, fields=fields)
        assert node.to_dict() == _sdk_node(facade, uuid,
                                           fields).to_dict(computed=False)


def test_a_node_snapshot_reads_back_as_the_same_node(odd_ironic, facade):
    uuid = odd_ironic.request('POST', '/v1/nodes', expect=(201,),
                              json={'driver': 'fake-hardware'})['uuid']
    snapshot = facade.get_node(uuid).to_dict(computed=False)
    again = node_mod.Node.from_snapshot(snapshot)
    assert again.to_dict() == snapshot
    assert again.driver == 'fake-hardware'
    with pytest.raises(AttributeError):
        again.no_such_field


def test_an_unknown_node_is_not_found_and_a_bad_name_is_a_bad_request(
        facade):
    missing = '4a1b3c56-0000-4000-8000-000000000000'
    with pytest.raises(client.NotFound) as not_found:
        facade.get_node(missing)
    assert 'Node %s could not be found' % missing in str(not_found.value)
    assert not_found.value.status_code == 404
    with pytest.raises(client.BadRequest):
        facade.get_node('bad!name')


def test_a_call_after_ironic_restarted_opens_a_new_connection(
        odd_ironic, facade):
    uuid = odd_ironic.create_node()
    facade.get_node(uuid)
    odd_ironic.stop()
    odd_ironic.start()
    assert facade.get_node(uuid).id == uuid


def test_a_paced_facade_judges_its_calls_and_shares_its_facades_connection(
        odd_ironic, facade):
    uuid = odd_ironic.create_node()
    facade.get_node(uuid)
    pacing = pacing_mod.Pacing(2, 4.0)
    paced = facade.paced(pacing)
    paced.set_pxe_boot(uuid)  # waits for the BMC: not judged
    paced.patch_node(uuid, [{'op': 'add', 'path': '/extra/paced',
                             'value': 'yes'}])
    assert paced.get_node(uuid).extra == {'paced': 'yes'}
    with pytest.raises(client.NotFound):
        paced.get_node('00000000-0000-0000-0000-000000000000')
    assert sorted(pacing._floors) == ['get_node', 'patch_node']
    assert pacing._in_flight == 0 and pacing.limit == 2
    facade.get_node(uuid)
    assert sorted(pacing._floors) == ['get_node', 'patch_node']
