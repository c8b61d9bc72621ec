"""Discovery (``[processing] node_not_found_hook = enroll``) through the
all-in-one process and a real Ironic: ramdisk data nobody introspects
creates its Ironic node, which is then processed like any other; data
that belongs to a node Ironic already has is refused."""

import uuid as uuidlib

import pytest
import requests

import backends
import batch
import embedded
import ramdisk


@pytest.fixture(scope='module')
def service(tmp_path_factory, ironic):
    proc, url = embedded.start(tmp_path_factory.mktemp('aio'), ironic.url,
                               OS_PROCESSING__NODE_NOT_FOUND_HOOK='enroll')
    yield url
    proc.terminate()
    proc.wait(30)


def _unique():
    """Two MACs and a BMC address no other test uses."""
    raw = uuidlib.uuid4().bytes
    prefix = '52:55:%02x:%02x:%02x' % tuple(raw[:3])
    return [prefix + ':01', prefix + ':02'], '203.0.%d.%d' % (
        raw[3] % 250, raw[4] % 250 + 1)


def _nodes_with_bmc(ironic, bmc):
    nodes = ironic.request('GET', '/v1/nodes?fields=uuid,driver_info')
    return [n['uuid'] for n in nodes['nodes']
            if (n['driver_info'] or {}).get('ipmi_address') == bmc]


def _continue(url, payload):
    return requests.post(url + '/v1/continue', json=payload, timeout=60)


def _wait_finished(url, uuid):
    status = {}

    def finished():
        status.update(requests.get('%s/v1/introspection/%s' % (
            url, uuid), timeout=30).json())
        return status.get('finished')
    backends.wait_for(finished, 120, interval=0.5,
                      message='node %s not finished: %s' % (uuid, status))
    return status


def test_unknown_macs_create_the_node_which_is_then_processed(
        service, ironic):
    macs, bmc = _unique()
    payload = ramdisk.ipa_payload(macs, bmc)
    payload['inventory']['cpu']['flags'] = ['fpu', 'vmx', 'aes']
    response = _continue(service, payload)
    assert response.status_code == 200, response.text
    uuid = response.json()['uuid']
    try:
        status = _wait_finished(service, uuid)
        assert (status['state'], status['error']) == ('finished', None)
        node = ironic.get_node(uuid)
        assert (node['driver'], node['driver_info']) == (
            'fake-hardware', {'ipmi_address': bmc})
        assert node['provision_state'] == 'enroll'
        props = node['properties']
        assert (props['cpus'], props['memory_mb'], props['local_gb'],
                props['cpu_arch']) == ('4', '8192', '99', 'x86_64'), props
        assert set(props['capabilities'].split(',')) == {
            'cpu_vt:true', 'cpu_aes:true'}
        assert [p['address'] for p in ironic.ports(uuid)] == macs[:1]
        batch.assert_powered_off(ironic, node)
        data = requests.get('%s/v1/introspection/%s/data' % (
            service, uuid), timeout=30).json()
        assert data['auto_discovered'] is True
        assert _nodes_with_bmc(ironic, bmc) == [uuid]
    finally:
        ironic.delete_node(uuid)


def test_a_mac_that_is_a_port_of_a_node_not_introspected_is_refused(
        service, ironic):
    macs, bmc = _unique()
    owner = ironic.create_node(macs=macs[1:])
    try:
        response = _continue(service, ramdisk.ipa_payload(macs, bmc))
        assert 400 <= response.status_code < 500, response.text
        message = response.json()['error']['message']
        assert 'Port %s already exists' % macs[1] in message
        assert _nodes_with_bmc(ironic, bmc) == []
        status = requests.get('%s/v1/introspection/%s' % (service, owner),
                              timeout=30)
        assert status.status_code == 404
    finally:
        ironic.delete_node(owner)


def test_a_bmc_address_another_node_has_is_refused(service, ironic):
    macs, bmc = _unique()
    owner = ironic.create_node(bmc_address=bmc)
    try:
        response = _continue(service, ramdisk.ipa_payload(macs, bmc))
        assert response.status_code == 400, response.text
        assert 'Node %s already has BMC address %s' % (owner, bmc) in \
            response.json()['error']['message']
        assert _nodes_with_bmc(ironic, bmc) == [owner]
    finally:
        ironic.delete_node(owner)
