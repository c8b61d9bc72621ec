"""Discovery: the ``enroll`` node-not-found hook, and ``/v1/continue`` on
a real Service (SQLite, fake:/ transport) with the Ironic facade replaced
by a recorder (the functional test runs it against a real Ironic)."""

import types

import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.common import retry
from inspector_ha.db import lookup
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st
from inspector_ha.processing import base
from inspector_ha.processing import not_found
from inspector_ha.processing.hooks import enroll
from inspector_ha import service as service_mod

import hooktools

MACS = ['52:54:00:ab:00:01', '52:54:00:ab:00:02']
BMC, BMC6 = '192.0.2.50', '2001:db8::50'


def _processed(macs=MACS, bmc=BMC, bmc6=None):
    """Data as the pre-processing hooks leave it."""
    return {'all_interfaces': {'eth%d' % i: {'mac': m, 'pxe': i == 0}
                               for i, m in enumerate(macs)},
            'ipmi_address': bmc, 'ipmi_v6address': bmc6}


@pytest.fixture
def conf():
    return hooktools.new_conf()


def _enroll(conf, data, ironic=None):
    ironic = ironic or hooktools.RecordingIronic()
    return enroll.EnrollHook(conf, ironic)(data), ironic


def test_enroll_creates_the_node_with_driver_bmc_and_fields(conf):
    conf.set_override('enroll_node_fields', {'resource_class': 'bm'},
                      group='discovery')
    data = _processed()
    uuid, ironic = _enroll(conf, data)
    [(attrs,)] = ironic.written('create_node')
    assert attrs == {'resource_class': 'bm', 'driver': 'fake-hardware',
                     'driver_info': {'ipmi_address': BMC},
                     'provision_state': 'enroll'}
    assert uuid in ironic.nodes
    assert data['auto_discovered'] is True


@pytest.mark.parametrize('versions,bmc,bmc6,expected', [
    (['4', '6'], BMC, BMC6, BMC), (['6', '4'], BMC, BMC6, BMC6),
    (['4', '6'], '0.0.0.0', BMC6, BMC6), (['4'], None, BMC6, None),
    (['6'], BMC, None, None)])
def test_the_bmc_address_follows_the_enabled_versions(conf, versions, bmc,
                                                      bmc6, expected):
    conf.set_override('enabled_bmc_address_version', versions,
                      group='discovery')
    _, ironic = _enroll(conf, _processed(bmc=bmc, bmc6=bmc6))
    [(attrs,)] = ironic.written('create_node')
    assert attrs['driver_info'] == (
        {'ipmi_address': expected} if expected else {})


def test_a_mac_that_is_already_a_port_is_refused(conf):
    ironic = hooktools.RecordingIronic()
    port_id = ironic.add_port('other-node', MACS[1])
    data = _processed()
    with pytest.raises(base.HookError, match='Port %s already exists, '
                       'uuid: %s' % (MACS[1], port_id)):
        _enroll(conf, data, ironic)
    assert ironic.written('create_node') == []
    assert 'auto_discovered' not in data


def test_a_bmc_address_of_another_node_is_refused(conf):
    ironic = hooktools.RecordingIronic()
    ironic.add_node('owner', driver_info={'redfish_address':
                                          'https://%s/redfish' % BMC})
    with pytest.raises(base.HookError, match='Node owner already has BMC '
                       'address %s' % BMC):
        _enroll(conf, _processed(), ironic)
    assert ironic.written('create_node') == []


def test_without_a_bmc_address_nodes_are_not_listed(conf):
    _, ironic = _enroll(conf, _processed(bmc=None))
    assert ironic.written('nodes_with_driver_info') == []
    assert [c[0] for c in ironic.calls] == ['port_owner', 'port_owner',
                                            'create_node']


def test_no_hook_is_loaded_unless_configured_and_a_bad_name_fails(conf):
    assert not_found.load(conf, None) is None
    conf.set_override('node_not_found_hook', 'enroll', group='processing')
    assert isinstance(not_found.load(conf, None), enroll.EnrollHook)
    conf.set_override('node_not_found_hook', 'nope', group='processing')
    with pytest.raises(RuntimeError, match='nope'):
        not_found.load(conf, None)


# /v1/continue with the hook

@pytest.fixture
def discovery(service_conf):
    service_conf.set_override('node_not_found_hook', 'enroll',
                              group='processing')
    service_conf.set_override('store_data', 'database', group='processing')
    svc = service_mod.Service(service_conf)
    svc.ironic = hooktools.RecordingIronic()
    svc.start(workers=False, periodic_jobs=False)
    yield svc, app_mod.create_app(svc).test_client()
    svc.shutdown()


def _ramdisk(macs=MACS, **extra):
    data = {'boot_interface': '01-' + macs[0].replace(':', '-'),
            'inventory': {'interfaces': [
                {'name': 'eth%d' % i, 'mac_address': m,
                 'ipv4_address': '10.0.0.%d' % (i + 5)}
                for i, m in enumerate(macs)], 'bmc_address': BMC}}
    data.update(extra)
    return data


def _ledger(svc, uuid):
    return [(r.event, r.status, r.attempt, ledger.payload(r).get(
        'auto_discovered')) for r in svc.store.transaction(
        ledger.for_node, uuid)]


def test_unknown_macs_enroll_the_node_and_queue_its_processing(discovery):
    svc, client = discovery
    response = client.post('/v1/continue', json=_ramdisk())
    assert response.status_code == 200, response.json
    uuid = response.json['uuid']
    assert uuid in svc.ironic.nodes
    node = svc.store.transaction(nodes.get, uuid)
    assert (node.state, node.attempt, node.manage_boot) == (
        st.ENROLLING, 1, True)
    assert _ledger(svc, uuid) == [(st.PROCESS, 'pending', 1, True)]
    assert [(h.event, h.from_state, h.to_state) for h in
            svc.store.transaction(nodes.history, uuid)] == [
        (nodes.ENROLL, None, st.ENROLLING)]
    raw = svc.store.transaction(svc.data_store.get, uuid, False)
    assert 'auto_discovered' not in raw and 'all_interfaces' not in raw


def test_a_retried_post_finds_the_enrolled_node_instead_of_another(
        discovery):
    svc, client = discovery
    first = client.post('/v1/continue', json=_ramdisk()).json['uuid']
    second = client.post('/v1/continue', json=_ramdisk())
    assert second.status_code == 200
    assert second.json['uuid'] == first
    assert len(svc.ironic.written('create_node')) == 1
    assert svc.store.transaction(lookup.find, MACS[1:], []) == first
    assert len(_ledger(svc, first)) == 1


def test_a_mac_of_an_existing_port_is_refused_with_a_400(discovery):
    svc, client = discovery
    svc.ironic.add_port('someone-else', MACS[0])
    response = client.post('/v1/continue', json=_ramdisk())
    assert response.status_code == 400
    assert response.json['error']['message'] == (
        'The following failures happened during running pre-processing '
        'hooks:\nNode not found hook failed: Port %s already exists, '
        'uuid: %s' % (MACS[0], next(iter(svc.ironic.ports_by_id))))
    assert svc.ironic.written('create_node') == []


def test_failed_pre_processing_hooks_still_run_the_hook_and_fail_its_node(
        discovery):
    svc, client = discovery
    response = client.post('/v1/continue', json=_ramdisk(error='boom'))
    assert response.status_code == 400
    message = response.json['error']['message']
    assert message.startswith('The following failures happened during '
                              'running pre-processing hooks:\n')
    assert 'Ramdisk reported error: boom' in message
    [uuid] = svc.ironic.nodes
    node = svc.store.transaction(nodes.get, uuid)
    assert node.state == st.ENROLLING
    [request] = svc.store.transaction(ledger.for_node, uuid)
    assert (request.event, request.status) == (st.FAIL, 'pending')
    assert ledger.payload(request)['error'] == message


def test_a_hook_failing_after_failed_pre_processing_lists_both(discovery):
    svc, client = discovery
    svc.ironic.add_port('someone-else', MACS[0])
    response = client.post('/v1/continue', json=_ramdisk(error='boom'))
    assert response.status_code == 400
    message = response.json['error']['message']
    assert 'Ramdisk reported error: boom' in message
    assert 'Node not found hook failed: Port %s already exists' % MACS[0] \
        in message
    assert svc.ironic.written('create_node') == []


class _FailingStore:
    enabled = True

    def save(self, session, uuid, data, processed):
        raise retry.BackendUnavailable('database', 'gone for the test')


def test_a_node_whose_row_cannot_be_written_is_deleted_again(discovery):
    svc, _ = discovery
    svc.data_store = _FailingStore()
    client = app_mod.create_app(svc).test_client()
    response = client.post('/v1/continue', json=_ramdisk())
    assert response.status_code == 503
    assert len(svc.ironic.written('create_node')) == 1
    assert len(svc.ironic.written('delete_node')) == 1
    assert svc.ironic.nodes == {}


def test_without_the_hook_unknown_macs_are_a_400_look_up_error(service):
    service.ironic = types.SimpleNamespace()
    client = app_mod.create_app(service).test_client()
    response = client.post('/v1/continue', json=_ramdisk())
    assert response.status_code == 400
    assert 'Look up error: Could not find a node for attributes' in \
        response.json['error']['message']
