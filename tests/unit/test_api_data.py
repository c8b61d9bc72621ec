"""Introspection data and reapply on a real Service (SQLite, tooz file://,
fake:/ transport), with each data store.

Only paths that do not call Ironic are driven; a successful reapply is in
``tests/functional/test_introspection_api.py``.
"""

import json

import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st
from inspector_ha.messaging import objects
from inspector_ha import service as service_mod

UNKNOWN = '00000000-0000-4000-8000-000000000000'
NOT_CONFIGURED = ('Inspector is not configured to store data. Set the '
                  '[processing] store_data configuration option to change '
                  'this.')
REAPPLY_NEEDS_STORE = ('Inspector is not configured to store introspection '
                       'data. Set the [processing]store_data configuration '
                       'option to change this.')
DATA = {'inventory': {'interfaces': [
    {'name': 'eth0', 'mac_address': '11:22:33:44:55:66',
     'ipv4_address': '10.0.0.5'}]},
    'boot_interface': '01-11-22-33-44-55-66', 'nested': {'list': [1, 2]}}


@pytest.fixture
def stored(service_conf):
    """A Service keeping data in the database; its coordinator started."""
    service_conf.set_override('store_data', 'database', group='processing')
    svc = service_mod.Service(service_conf)
    svc.start(workers=False, periodic_jobs=False)
    yield svc
    svc.shutdown()


@pytest.fixture
def client(service):
    return app_mod.create_app(service).test_client()


@pytest.fixture
def stored_client(stored):
    return app_mod.create_app(stored).test_client()


def _error(response, code):
    assert response.status_code == code
    assert response.mimetype == 'application/json'
    assert set(response.json) == {'error'}
    return response.json['error']['message']


def _save(svc, uuid, data, processed):
    svc.store.transaction(svc.data_store.save, uuid, data, processed)


def _ledger(svc, uuid):
    return [(r.event, r.status, r.attempt, ledger.payload(r))
            for r in svc.store.transaction(ledger.for_node, uuid)]


def _reapply(client, uuid, **kwargs):
    return client.post('/v1/introspection/%s/data/unprocessed' % uuid,
                       **kwargs)


@pytest.mark.parametrize('suffix', ['/data', '/data/unprocessed'])
def test_data_without_a_store_is_a_404_saying_so(client, put_node, suffix):
    uuid = put_node(st.FINISHED)
    response = client.get('/v1/introspection/' + uuid + suffix)
    assert _error(response, 404) == NOT_CONFIGURED


@pytest.mark.parametrize('suffix,processed', [
    ('/data', True), ('/data/unprocessed', False)])
def test_data_never_stored_is_a_404_naming_the_node(stored_client, put_node,
                                                    suffix, processed):
    uuid = put_node(st.FINISHED)
    response = stored_client.get('/v1/introspection/' + uuid + suffix)
    assert _error(response, 404) == ('Introspection data not found for '
                                     'node %s, processed=%s' %
                                     (uuid, processed))


def test_processed_and_unprocessed_data_are_returned_as_stored_json(
        stored, stored_client, put_node):
    uuid = put_node(st.FINISHED)
    _save(stored, uuid, DATA, False)
    _save(stored, uuid, dict(DATA, cpus=4), True)
    processed = stored_client.get('/v1/introspection/%s/data/' % uuid)
    raw = stored_client.get('/v1/introspection/%s/data/unprocessed' % uuid)
    assert (processed.status_code, processed.mimetype) == (
        200, 'application/json')
    assert json.loads(processed.data) == dict(DATA, cpus=4)
    assert (raw.status_code, json.loads(raw.data)) == (200, DATA)


def test_reapply_without_a_body_or_a_store_is_a_400(client, service,
                                                     put_node):
    uuid = put_node(st.FINISHED)
    assert _error(_reapply(client, uuid), 400) == REAPPLY_NEEDS_STORE
    assert _error(_reapply(client, uuid, json={}), 400) == \
        REAPPLY_NEEDS_STORE
    assert _ledger(service, uuid) == []


def test_reapply_with_a_body_and_no_store_queues_the_body(client, service,
                                                         put_node):
    uuid = put_node(st.ERROR)
    response = _reapply(client, uuid, json=dict(DATA, logs='bG9ncw=='))
    assert (response.status_code, response.data) == (202, b'{}\n')
    assert response.mimetype == 'application/json'
    assert _ledger(service, uuid) == [('reapply', 'pending', 1, DATA)]


def test_reapply_without_a_body_queues_the_stored_unprocessed_data(
        stored, stored_client, put_node):
    uuid = put_node(st.FINISHED)
    _save(stored, uuid, DATA, False)
    response = _reapply(stored_client, uuid)
    assert (response.status_code, response.data) == (202, b'{}\n')
    assert _ledger(stored, uuid) == [('reapply', 'pending', 1, DATA)]


def test_reapply_with_a_body_stores_it_as_the_new_unprocessed_data(
        stored, stored_client, put_node):
    uuid = put_node(st.FINISHED)
    _save(stored, uuid, {'old': True}, False)
    assert _reapply(stored_client, uuid, json=DATA).status_code == 202
    raw = stored_client.get('/v1/introspection/%s/data/unprocessed' % uuid)
    assert json.loads(raw.data) == DATA
    assert _ledger(stored, uuid) == [('reapply', 'pending', 1, DATA)]


def test_reapply_without_a_body_or_stored_data_is_a_404(stored,
                                                        stored_client,
                                                        put_node):
    uuid = put_node(st.FINISHED)
    assert 'processed=False' in _error(_reapply(stored_client, uuid), 404)
    assert _ledger(stored, uuid) == []


def test_reapply_of_a_node_not_in_cache_is_a_404(client):
    assert _error(_reapply(client, UNKNOWN, json=DATA), 404) == \
        'Could not find node %s in cache' % UNKNOWN


@pytest.mark.parametrize('body', ['[1]', '"text"', '42', '{"a": '])
def test_reapply_with_a_body_that_is_not_a_json_object_is_a_400(
        client, service, put_node, body):
    uuid = put_node(st.FINISHED)
    response = _reapply(client, uuid, data=body,
                        content_type='application/json')
    _error(response, 400)
    assert _ledger(service, uuid) == []


@pytest.mark.parametrize('state', [st.STARTING, st.WAITING, st.PROCESSING,
                                   st.ABORTING, st.ENROLLING])
def test_reapply_of_a_node_busy_introspecting_is_a_400_storing_nothing(
        stored, stored_client, put_node, state):
    uuid = put_node(state)
    _save(stored, uuid, {'old': True}, False)
    assert 'Invalid state' in _error(
        _reapply(stored_client, uuid, json=DATA), 400)
    raw = stored_client.get('/v1/introspection/%s/data/unprocessed' % uuid)
    assert json.loads(raw.data) == {'old': True}
    assert _ledger(stored, uuid) == []


def test_a_reapply_whose_data_fails_the_pre_processing_hooks_ends_in_error(
        client, service, put_node, ironic_discovery):
    uuid = put_node(st.FINISHED)
    assert _reapply(client, uuid, json={'error': 'disk on fire'}
                    ).status_code == 202
    [request] = service.store.transaction(ledger.for_node, uuid)
    assert service.worker().handle(objects.TransitionRequest(
        request_id=request.id, node_uuid=uuid, event=st.REAPPLY)) is True
    status = client.get('/v1/introspection/' + uuid).json
    assert (status['state'], status['finished']) == ('error', True)
    assert 'Ramdisk reported error: disk on fire' in status['error']
    assert 'pre-processing hooks' in status['error']
    assert ironic_discovery.calls_beyond_discovery() == []


@pytest.mark.parametrize('method,path,code', [
    ('post', '/v1/introspection/%s', 400),
    ('get', '/v1/introspection/%s', 404),
    ('post', '/v1/introspection/%s/abort', 404),
    ('get', '/v1/introspection/%s/data', 404),
    ('get', '/v1/introspection/%s/data/unprocessed', 404),
    ('post', '/v1/introspection/%s/data/unprocessed', 400),
    ('delete', '/v1/introspection', 405),
    ('put', '/v1/introspection/%s/data', 405)])
def test_introspection_endpoints_answer_errors_as_json(client, method, path,
                                                       code):
    url = path % UNKNOWN if '%s' in path else path
    query = '?manage_boot=maybe' if method == 'post' and \
        url.endswith(UNKNOWN) else ''
    _error(getattr(client, method)(url + query), code)
