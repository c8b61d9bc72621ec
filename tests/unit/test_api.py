"""The v1 API on a real Service (SQLite, tooz file://, fake:/ transport).

Nodes are put in their states by writing rows through ``db/nodes.py``;
none of these endpoints calls Ironic.
"""

import json
import socket

import flask
import pytest
from werkzeug import test
from werkzeug.middleware import proxy_fix

from inspector_ha.api import app as app_mod
from inspector_ha.api import versions
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st
from inspector_ha import service as service_mod

VERSION = 'X-OpenStack-Ironic-Inspector-API-Version'
MIN, MAX = ('X-OpenStack-Ironic-Inspector-API-Minimum-Version',
            'X-OpenStack-Ironic-Inspector-API-Maximum-Version')
MAC = '11:22:33:44:55:66'
UNKNOWN = '00000000-0000-4000-8000-000000000000'


@pytest.fixture
def client(service):
    return app_mod.create_app(service).test_client()


def _ramdisk_data(mac=MAC, **extra):
    data = {'boot_interface': '01-' + mac.replace(':', '-'),
            'inventory': {'interfaces': [
                {'name': 'eth0', 'mac_address': mac,
                 'ipv4_address': '10.0.0.5'}],
                'cpu': {'count': 2, 'architecture': 'x86_64'},
                'memory': {'physical_mb': 2048},
                'disks': [{'name': '/dev/sda', 'size': 10 * 1024 ** 3}]},
            'logs': 'bG9ncw=='}
    data.update(extra)
    return data


def _ledger(service, uuid):
    return [(r.event, r.status, r.attempt)
            for r in service.store.transaction(ledger.for_node, uuid)]


def _assert_error(response, code):
    assert response.status_code == code
    assert response.mimetype == 'application/json'
    assert set(response.json) == {'error'}
    assert response.json['error']['message']
    assert (response.headers[MIN], response.headers[MAX]) == ('1.0', '1.18')
    return response.json['error']['message']


def test_the_root_document_lists_v1_at_the_current_version(client):
    response = client.get('/')
    assert response.status_code == 200
    assert response.json == {'versions': [{
        'id': '1.18', 'status': 'CURRENT',
        'links': [{'href': 'http://localhost/v1', 'rel': 'self'}]}]}


@pytest.mark.parametrize('path', ['/v1', '/v1/'])
def test_the_v1_document_lists_its_resources_with_absolute_links(client,
                                                                 path):
    response = client.get(path)
    assert response.status_code == 200
    assert response.json == {'resources': [
        {'name': name,
         'links': [{'href': 'http://localhost/v1/' + name, 'rel': 'self'}]}
        for name in ('continue', 'introspection', 'rules')]}


def test_links_honour_the_forwarded_host_and_proto(client):
    headers = {'X-Forwarded-Host': 'inspector.example.com:5443',
               'X-Forwarded-Proto': 'https'}
    href = client.get('/', headers=headers).json['versions'][0]['links'][0]
    assert href['href'] == 'https://inspector.example.com:5443/v1'
    resources = client.get('/v1', headers=headers).json['resources']
    assert resources[1]['links'][0]['href'] == \
        'https://inspector.example.com:5443/v1/introspection'


@pytest.mark.parametrize('headers', [
    {}, {'Host': 'inspector:5050'}, {'X-Forwarded-Prefix': '/baremetal'},
    {'X-Forwarded-Prefix': '/b%C3%A4re%20metal'},
    {'X-Forwarded-Host': '[2001:db8::1]:5050', 'X-Forwarded-Proto': 'https'},
    {'Host': 'xn--bcher-kva.example'}],
    ids=['plain', 'a port', 'a prefix', 'an encoded prefix', 'IPv6',
         'punycode'])
def test_the_remembered_root_is_werkzeugs_url_root(service, headers):
    app = app_mod.create_app(service)
    forwarded = proxy_fix.ProxyFix(lambda environ, _start: environ, x_for=1,
                                   x_proto=1, x_host=1, x_port=1, x_prefix=1)
    for _twice in range(2):
        environ = forwarded(test.EnvironBuilder(
            '/v1', headers=headers).get_environ(), None)
        with app.request_context(environ):
            assert versions.root_url() == flask.request.url_root.rstrip('/')


def test_an_unknown_version_document_is_a_404(client):
    message = _assert_error(client.get('/v2'), 404)
    assert message == 'Version v2 not found.'


@pytest.mark.parametrize('method,path,headers,code', [
    ('get', '/', {}, 200),
    ('get', '/', {VERSION: '1.0'}, 200),
    ('get', '/', {VERSION: 'latest'}, 200),
    ('get', '/', {VERSION: 'LATEST'}, 200),
    ('get', '/no/such/path', {}, 404),
    ('delete', '/v1/continue', {}, 405),
    ('get', '/', {VERSION: '1.19'}, 406),
    ('get', '/', {VERSION: 'abc'}, 400),
    ('post', '/v1/continue', {}, 400)])
def test_every_response_carries_the_version_range_headers(
        client, method, path, headers, code):
    response = getattr(client, method)(path, headers=headers)
    assert response.status_code == code
    assert (response.headers[MIN], response.headers[MAX]) == ('1.0', '1.18')


@pytest.mark.parametrize('value', ['abc', '1', '1.2.3', '1.x', ''])
def test_a_malformed_version_is_a_400_json_error(client, value):
    response = client.get('/', headers={VERSION: value or ' . '})
    assert 'Malformed API version' in _assert_error(response, 400)


@pytest.mark.parametrize('value', ['1.19', '2.0', '0.9'])
def test_a_version_out_of_range_is_a_406_json_error(client, value):
    message = _assert_error(client.get('/', headers={VERSION: value}), 406)
    assert message == ('Unsupported API version %s, supported range is '
                       '1.0 to 1.18' % value)


def test_an_unknown_path_is_a_404_json_error(client):
    _assert_error(client.get('/v1/nothing/here'), 404)


def test_a_wrong_method_is_a_405_json_error_with_allow(client):
    response = client.put('/v1/introspection/' + UNKNOWN)
    _assert_error(response, 405)
    assert {m.strip() for m in response.headers['Allow'].split(',')} >= {
        'GET', 'POST'}


def test_the_status_of_an_unknown_node_is_a_404(client):
    message = _assert_error(client.get('/v1/introspection/' + UNKNOWN), 404)
    assert message == 'Could not find node %s in cache' % UNKNOWN


def test_the_status_of_a_node_is_upstreams_seven_keys(client, put_node):
    uuid = put_node(st.ERROR)
    body = client.get('/v1/introspection/%s/' % uuid).json
    assert set(body) == {'uuid', 'state', 'finished', 'started_at',
                         'finished_at', 'error', 'links'}
    assert (body['uuid'], body['state'], body['finished'], body['error']) \
        == (uuid, 'error', True, 'set up by a test')
    assert body['links'] == [{'href': 'http://localhost/v1/introspection/'
                              + uuid, 'rel': 'self'}]


def test_continue_with_invalid_json_is_a_400(client):
    response = client.post('/v1/continue', data=b'{"inventory": ',
                           content_type='application/json')
    assert 'Invalid JSON' in _assert_error(response, 400)


@pytest.mark.parametrize('body', ['[]', '[1, 2]', '"text"', '42', 'null'])
def test_continue_with_json_that_is_not_an_object_is_a_400(client, body):
    response = client.post('/v1/continue', data=body,
                           content_type='application/json')
    assert 'expected a JSON object' in _assert_error(response, 400)


def test_continue_with_a_body_over_the_limit_is_a_413(service_conf,
                                                      ironic_discovery):
    service_conf.set_override('max_request_bytes', 1024)
    svc = service_mod.Service(service_conf)
    try:
        client = app_mod.create_app(svc).test_client()
        data = json.dumps(_ramdisk_data(padding='x' * 2048))
        _assert_error(client.post('/v1/continue', data=data,
                                  content_type='application/json'), 413)
    finally:
        svc.shutdown()


def test_continue_with_unknown_macs_is_upstreams_400_look_up_error(
        client, put_node):
    put_node(st.WAITING, macs=[MAC])
    response = client.post('/v1/continue',
                           json=_ramdisk_data('aa:bb:cc:dd:ee:ff'))
    assert _assert_error(response, 400).startswith(
        'The following failures happened during running pre-processing '
        'hooks:\nLook up error: Could not find a node for attributes ')


def test_a_ramdisk_error_ends_the_introspection_with_its_text(
        client, service, put_node):
    uuid = put_node(st.WAITING, macs=[MAC])
    response = client.post('/v1/continue',
                           json=_ramdisk_data(error='disk on fire'))
    assert 'Ramdisk reported error: disk on fire' in \
        _assert_error(response, 400)
    [request] = service.store.transaction(ledger.for_node, uuid)
    assert (request.event, request.status, request.attempt) == (
        'error', 'pending', 1)
    assert 'disk on fire' in ledger.payload(request)['error']


def test_continue_with_valid_data_queues_one_process_request(
        client, service, put_node, ironic_discovery):
    uuid = put_node(st.WAITING, macs=[MAC])
    response = client.post('/v1/continue', json=_ramdisk_data())
    assert response.status_code == 200
    assert response.json == {'uuid': uuid}
    [request] = service.store.transaction(ledger.for_node, uuid)
    assert (request.event, request.status) == ('process', 'pending')
    payload = ledger.payload(request)
    assert 'logs' not in payload and payload['all_interfaces']['eth0']
    assert ironic_discovery.calls_beyond_discovery() == []


def test_a_retried_continue_reuses_the_open_process_request(client,
                                                             service,
                                                             put_node):
    uuid = put_node(st.WAITING, macs=[MAC])
    first = client.post('/v1/continue', json=_ramdisk_data())
    second = client.post('/v1/continue', json=_ramdisk_data())
    assert (first.status_code, second.status_code) == (200, 200)
    assert second.json == {'uuid': uuid}
    assert _ledger(service, uuid) == [('process', 'pending', 1)]


@pytest.mark.parametrize('state', [st.PROCESSING, st.FINISHED, st.ERROR])
def test_continue_for_a_node_not_waiting_is_a_400(client, service, put_node,
                                                  state):
    uuid = put_node(state, macs=[MAC])
    _assert_error(client.post('/v1/continue', json=_ramdisk_data()), 400)
    assert _ledger(service, uuid) == []


def test_continue_for_a_node_still_starting_is_accepted_and_queued(
        client, service, put_node):
    uuid = put_node(st.STARTING, macs=[MAC])
    response = client.post('/v1/continue', json=_ramdisk_data())
    assert (response.status_code, response.json) == (200, {'uuid': uuid})
    assert _ledger(service, uuid) == [('process', 'pending', 1)]


def test_abort_of_a_known_node_queues_an_abort_request(client, service,
                                                       put_node):
    uuid = put_node(st.WAITING)
    response = client.post('/v1/introspection/%s/abort' % uuid)
    assert (response.status_code, response.data) == (202, b'{}\n')
    assert _ledger(service, uuid) == [('abort', 'pending', 1)]


def test_abort_of_an_unknown_node_is_a_404(client):
    _assert_error(client.post('/v1/introspection/%s/abort' % UNKNOWN), 404)


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def test_a_service_is_built_while_ironic_is_unreachable(service_conf):
    service_conf.set_override('endpoint_override',
                              'http://127.0.0.1:%d' % _free_port(),
                              group='ironic')
    svc = service_mod.Service(service_conf)
    svc.shutdown()
