"""[processing] permit_active_introspection: data of an active node that
no introspection waits for is processed without powering it off; active
nodes may be started (Ironic replaced by a recorder; the functional test
runs it against a real Ironic)."""

import types

import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.api import checks
from inspector_ha.api import errors
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st
from inspector_ha import service as service_mod

import hooktools

MAC = '52:54:00:ac:00:01'


@pytest.fixture
def active(service_conf):
    service_conf.set_override('permit_active_introspection', True,
                              group='processing')
    svc = service_mod.Service(service_conf)
    svc.ironic = hooktools.RecordingIronic()
    svc.start(workers=False, periodic_jobs=False)
    yield svc, app_mod.create_app(svc).test_client()
    svc.shutdown()


def _ramdisk(**extra):
    data = {'boot_interface': '01-' + MAC.replace(':', '-'),
            'inventory': {'interfaces': [
                {'name': 'eth0', 'mac_address': MAC,
                 'ipv4_address': '10.0.0.5'}]}}
    data.update(extra)
    return data


def _node(svc, state):
    uuid = svc.ironic.add_node(provision_state=state)
    svc.ironic.add_port(uuid, MAC)
    return uuid


@pytest.mark.parametrize('state', ['active', 'rescue'])
def test_data_of_an_active_node_is_recorded_without_managing_its_boot(
        active, state):
    svc, client = active
    uuid = _node(svc, state)
    response = client.post('/v1/continue', json=_ramdisk())
    assert response.status_code == 200, response.json
    assert response.json == {'uuid': uuid}
    row = svc.store.transaction(nodes.get, uuid)
    assert (row.state, row.manage_boot) == (st.ENROLLING, False)
    [request] = svc.store.transaction(ledger.for_node, uuid)
    assert request.event == st.PROCESS
    assert svc.ironic.written('delete_node') == []


def test_data_of_a_node_in_another_state_is_refused(active):
    svc, client = active
    _node(svc, 'available')
    response = client.post('/v1/continue', json=_ramdisk())
    assert response.status_code == 400
    assert 'is not active, its provision state is available' in \
        response.json['error']['message']


def test_without_the_option_an_active_nodes_data_is_a_look_up_error(
        service):
    service.ironic = hooktools.RecordingIronic()
    _node(service, 'active')
    client = app_mod.create_app(service).test_client()
    response = client.post('/v1/continue', json=_ramdisk())
    assert response.status_code == 400
    assert 'Look up error' in response.json['error']['message']


def test_an_active_node_can_be_started_only_with_the_option():
    node = types.SimpleNamespace(id='x', provision_state='active',
                                 is_maintenance=False)
    with pytest.raises(errors.ApiError, match='Refusing to introspect'):
        checks.check_startable(None, node, manage_boot=False,
                               permit_active=False)
    checks.check_startable(None, node, manage_boot=False,
                           permit_active=True)
