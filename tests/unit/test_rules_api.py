"""``/v1/rules`` on a real Service (SQLite, tooz file://, fake:/ transport);
none of these endpoints calls Ironic."""

import uuid as uuidlib

import pytest

from inspector_ha.api import app as app_mod

VERSION = 'X-OpenStack-Ironic-Inspector-API-Version'
RULE = {'description': 'big nodes',
        'conditions': [{'op': 'ge', 'field': 'memory_mb', 'value': 4096}],
        'actions': [{'action': 'set-capability', 'name': 'big',
                     'value': '{data[cpus]}'}]}


@pytest.fixture
def client(service):
    return app_mod.create_app(service).test_client()


def _create(client, **body):
    response = client.post('/v1/rules', json=dict(RULE, **body))
    assert response.status_code == 201, response.json
    return response.json


def _error(response, code):
    assert response.status_code == code
    assert response.mimetype == 'application/json'
    return response.json['error']['message']


def _assert_no_content(response):
    assert response.status_code == 204
    assert response.data == b''
    assert response.mimetype == 'text/plain'
    assert response.headers['Content-Length'] == '0'


def test_a_created_rule_is_returned_in_full_with_defaults(client):
    rule = _create(client)
    assert uuidlib.UUID(rule['uuid'])
    assert rule == {
        'uuid': rule['uuid'], 'description': 'big nodes', 'scope': None,
        'conditions': [{'op': 'ge', 'field': 'memory_mb', 'value': 4096,
                        'multiple': 'any', 'invert': False}],
        'actions': RULE['actions'],
        'links': [{'href': '/v1/rules/' + rule['uuid'], 'rel': 'self'}]}


@pytest.mark.parametrize('version,code', [
    ('1.0', 200), ('1.2', 200), ('1.5', 200), ('1.6', 201), ('1.18', 201),
    ('latest', 201), (None, 201)])
def test_creation_answers_200_before_1_6_and_201_since(client, version,
                                                       code):
    headers = {VERSION: version} if version else {}
    response = client.post('/v1/rules', json=RULE, headers=headers)
    assert response.status_code == code
    assert response.json['description'] == 'big nodes'


def test_a_rule_reads_back_as_it_was_created(client):
    rule = _create(client, scope='rack-1', uuid=str(uuidlib.uuid4()))
    response = client.get('/v1/rules/' + rule['uuid'])
    assert response.status_code == 200
    assert response.json == rule
    assert rule['scope'] == 'rack-1'


def test_the_list_is_short_ordered_by_creation_with_relative_links(client):
    rules = [_create(client, description='r%d' % i, scope=scope)
             for i, scope in enumerate([None, 's', None])]
    response = client.get('/v1/rules')
    assert response.status_code == 200
    assert response.json == {'rules': [
        {'uuid': r['uuid'], 'description': r['description'],
         'scope': r['scope'],
         'links': [{'href': '/v1/rules/' + r['uuid'], 'rel': 'self'}]}
        for r in rules]}


def test_an_empty_list_is_an_empty_array(client):
    assert client.get('/v1/rules/').json == {'rules': []}


def test_rule_links_stay_relative_behind_a_proxy(client):
    rule = _create(client)
    headers = {'X-Forwarded-Host': 'inspector.example.com',
               'X-Forwarded-Prefix': '/baremetal-introspection'}
    [short] = client.get('/v1/rules', headers=headers).json['rules']
    assert short['links'][0]['href'] == \
        '/baremetal-introspection/v1/rules/' + rule['uuid']


def test_an_unknown_rule_is_a_404(client):
    uuid = str(uuidlib.uuid4())
    assert _error(client.get('/v1/rules/' + uuid), 404) == \
        'Rule %s was not found' % uuid
    assert _error(client.delete('/v1/rules/' + uuid), 404) == \
        'Rule %s was not found' % uuid


def test_a_duplicate_uuid_is_a_409(client):
    uuid = _create(client)['uuid']
    assert _error(client.post('/v1/rules', json=dict(RULE, uuid=uuid)),
                  409) == 'Rule with UUID %s already exists' % uuid


def test_deleting_a_rule_is_a_204_with_an_empty_text_body(client):
    keep, gone = _create(client), _create(client)
    _assert_no_content(client.delete('/v1/rules/' + gone['uuid']))
    assert _error(client.get('/v1/rules/' + gone['uuid']), 404)
    assert [r['uuid'] for r in client.get('/v1/rules').json['rules']] == \
        [keep['uuid']]


def test_deleting_all_rules_is_a_204_and_empties_the_list(client):
    for _ in range(3):
        _create(client)
    _assert_no_content(client.delete('/v1/rules'))
    assert client.get('/v1/rules').json == {'rules': []}
    _assert_no_content(client.delete('/v1/rules'))


def test_a_rule_is_found_by_any_spelling_of_its_uuid(client):
    uuid = _create(client)['uuid']
    assert client.get('/v1/rules/' + uuid.upper()).json['uuid'] == uuid
    _assert_no_content(client.delete('/v1/rules/' + uuid.upper()))


@pytest.mark.parametrize('body,message', [
    (dict(RULE, uuid='nope'), 'Invalid UUID value'),
    (dict(RULE, actions=[]),
     'Validation failed for actions: [] should be non-empty'),
    (dict(RULE, actions=[{'action': 'fail'}]),
     'Invalid parameters for action fail: missing required parameter(s): '
     'message'),
    ([RULE], 'Invalid data: expected a JSON object, got list')])
def test_an_invalid_rule_is_a_400_json_error(client, body, message):
    assert _error(client.post('/v1/rules', json=body), 400) == message
    assert client.get('/v1/rules').json == {'rules': []}


def test_a_body_that_is_not_json_is_a_400(client):
    response = client.post('/v1/rules', data='{nope',
                           content_type='application/json')
    assert _error(response, 400).startswith('Invalid JSON body')


def test_a_wrong_method_is_a_405(client):
    assert client.put('/v1/rules').status_code == 405
    assert client.post('/v1/rules/' + str(uuidlib.uuid4())).status_code \
        == 405
