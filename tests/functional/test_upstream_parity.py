"""Upstream behaviour an operator relies on, against a real Ironic:
root-device hints and skip_block_devices, keep_ports and
update_pxe_enabled, through the all-in-one process."""

import signal

import requests

import backends
import batch
import embedded
import needs
import ramdisk

GiB = 1024 ** 3
STALE_MAC = '52:54:ee:ee:ee:01'
#: The defaults and a hook written for ironic-inspector
#: (tests/plugins/upstream_style), run through the adapter.
HOOKS = '$default_processing_hooks,upstream_style'


def _properties(ironic, uuid, **values):
    ironic.request('PATCH', '/v1/nodes/%s' % uuid, json=[
        {'op': 'add', 'path': '/properties/%s' % name, 'value': value}
        for name, value in values.items()])


def _with_disks(payload):
    small = {'name': '/dev/sda', 'model': 'QEMU', 'size': 20 * GiB,
             'rotational': True, 'serial': 'SMALL'}
    big = {'name': '/dev/sdb', 'model': 'QEMU', 'size': 60 * GiB,
           'rotational': False, 'serial': 'BIG'}
    payload['inventory']['disks'] = [small, big]
    payload['root_disk'] = small
    return payload


def test_hints_and_port_options_act_on_the_real_ironic(tmp_path, ironic):
    needs.module('upstream_style_plugin')
    proc, url = embedded.start(
        tmp_path, ironic.url, OS_PROCESSING__PROCESSING_HOOKS=HOOKS,
        OS_PROCESSING__KEEP_PORTS='present',
        OS_PROCESSING__PERMIT_ACTIVE_INTROSPECTION='true')
    try:
        nodes = batch.create_nodes(ironic, 5)
        for payload in nodes.values():
            _with_disks(payload)
        hinted, skipped, unmatched, bad_op, not_json = nodes
        _properties(ironic, hinted, root_device={'serial': 'big'})
        _properties(ironic, skipped, root_device={'model': 'qemu'},
                    skip_block_devices=[{'size': 20}])
        _properties(ironic, unmatched, root_device={'serial': 'nope'})
        _properties(ironic, bad_op, root_device={'size': '<bigger> 10'})
        _properties(ironic, not_json, root_device='{"size": ')
        port = ironic.ports(hinted)[0]
        ironic.request('PATCH', '/v1/ports/%s' % port['uuid'], json=[
            {'op': 'replace', 'path': '/pxe_enabled', 'value': False}])
        ironic.request('POST', '/v1/ports', expect=(201,), json={
            'node_uuid': hinted, 'address': STALE_MAC})

        states = batch.introspect(ironic, [url], nodes, 180)

        for uuid in (hinted, skipped):
            assert states[uuid]['state'] == 'finished', states[uuid]
            node = ironic.get_node(uuid)
            props = node['properties']
            assert props['local_gb'] == '59', props
            assert props['upstream_style'] == uuid
            assert 'upstream_style:yes' in props['capabilities']
            assert node['traits'] == ['CUSTOM_UPSTREAM_STYLE']
            assert node['extra']['upstream_style'] is True
        assert states[unmatched]['error'] == \
            'No disks satisfied root device hints'
        for uuid, reason in ((bad_op, 'unknown operator "<bigger>"'),
                             (not_json, 'not valid JSON')):
            assert states[uuid]['state'] == 'error'
            assert states[uuid]['error'].startswith(
                'No disks could be found using the root device hints')
            assert reason in states[uuid]['error']
        ports = {p['address']: p for p in ironic.ports(hinted)}
        assert STALE_MAC not in ports
        assert ports[port['address']]['pxe_enabled'] is True
        _assert_an_active_node_is_processed_and_left_on(ironic, url)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def _assert_an_active_node_is_processed_and_left_on(ironic, url):
    macs = ['52:54:ee:ac:00:01', '52:54:ee:ac:00:02']
    uuid = ironic.create_node(macs=macs[:1], provision_state='available')
    ironic.set_provision_state(uuid, 'active', 'active', timeout=60)
    stale = '52:54:ee:ee:ee:02'
    ironic.request('POST', '/v1/ports', expect=(201,), json={
        'node_uuid': uuid, 'address': stale})
    power = ironic.power_state(uuid)
    resp = requests.post(url + '/v1/continue', timeout=30,
                         json=ramdisk.ipa_payload(macs, cpus=6))
    assert resp.status_code == 200, resp.text
    status = {}

    def finished():
        status.update(requests.get('%s/v1/introspection/%s' % (url, uuid),
                                   timeout=30).json())
        return status['finished']
    backends.wait_for(finished, 60, interval=0.5)
    assert (status['state'], status['error']) == ('finished', None)
    node = ironic.get_node(uuid)
    assert node['properties']['cpus'] == '6'
    assert (node['provision_state'], node['power_state']) == (
        'active', power)
    # keep_ports = present, but an active node's ports are never deleted
    assert {p['address'] for p in ironic.ports(uuid)} == {macs[0], stale}
