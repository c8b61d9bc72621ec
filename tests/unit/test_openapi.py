"""The OpenAPI document (``inspector_ha/api/openapi.yaml``) stays true.

Its operations are the Flask routes, its policy names and enums are the
code's, and sample responses of the real application (a real Service on
SQLite) validate against its response schemas and headers with
``openapi-schema-validator``. A schemathesis run against the served
document is in ``tests/functional/test_schemathesis.py``.
"""

import collections
import re

from openapi_schema_validator import oas30_format_checker
from openapi_schema_validator import OAS30Validator
import openapi_spec_validator
import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.api import openapi
from inspector_ha.api import policy
from inspector_ha.api import versions
from inspector_ha.fsm import states as st
from inspector_ha.rules import plugins
from inspector_ha import service as service_mod

VERSION = 'X-OpenStack-Ironic-Inspector-API-Version'
MAC = '11:22:33:44:55:66'
UNKNOWN = '00000000-0000-4000-8000-000000000000'
METHODS = ('get', 'put', 'post', 'delete', 'patch')
RAMDISK = {'boot_interface': '01-11-22-33-44-55-66',
           'inventory': {'interfaces': [{'name': 'eth0', 'mac_address': MAC,
                                         'ipv4_address': '10.0.0.5'}],
                         'cpu': {'count': 2, 'architecture': 'x86_64'},
                         'memory': {'physical_mb': 2048}},
           'logs': 'bG9ncw=='}
STRANGER = dict(RAMDISK, boot_interface=None, inventory={'interfaces': [
    {'name': 'eth0', 'mac_address': '66:55:44:33:22:11',
     'ipv4_address': '10.0.0.6'}]})
RULE = {'description': 'two cpus', 'scope': None,
        'conditions': [{'op': 'eq', 'field': 'cpus', 'value': 2}],
        'actions': [{'action': 'set-capability', 'name': 'small',
                     'value': 'yes'}]}
#: Operations a unit test cannot drive to success: they need Ironic.
NEEDS_IRONIC = {('post', '/v1/introspection/{node_id}')}

Sample = collections.namedtuple('Sample', 'method url status kwargs')


def _doc():
    return openapi.document()


def _operations():
    return {(method, path): operation
            for path, item in _doc()['paths'].items()
            for method, operation in item.items() if method in METHODS}


def _template(flask_rule):
    return re.sub(r'<(?:[^:>]+:)?([^>]+)>', r'{\1}', flask_rule)


def _routes(app):
    return {(method.lower(), _template(rule.rule))
            for rule in app.url_map.iter_rules() if rule.endpoint != 'static'
            for method in rule.methods - {'HEAD', 'OPTIONS'}}


def _operation_of(method, url):
    """The document's ``(method, path)`` serving ``url``; concrete paths
    win over templated ones, as OpenAPI says."""
    path = url.split('?')[0].rstrip('/') or '/'
    for template in sorted(_doc()['paths'], key=lambda t: t.count('{')):
        pattern = re.sub(r'\\\{[^}]*\\\}', '[^/]+', re.escape(template))
        if re.fullmatch(pattern, path):
            return method.lower(), template
    raise AssertionError('no path of the document serves %s' % url)


def _resolve(item):
    while '$ref' in item:
        node = _doc()
        for part in item['$ref'].lstrip('#/').split('/'):
            node = node[part]
        item = node
    return item


def _validate(instance, schema):
    root = {'allOf': [schema], 'components': _doc()['components']}
    OAS30Validator(root, format_checker=oas30_format_checker).validate(
        instance)


def _assert_documented(response, method, path):
    """``response`` has a documented status, headers and body."""
    spec = _resolve(_operations()[method, path]['responses']
                    [str(response.status_code)])
    for name, header in spec.get('headers', {}).items():
        header = _resolve(header)
        if header.get('required'):
            assert name in response.headers, name
        if name in response.headers:
            _validate(response.headers[name], header['schema'])
    content = spec.get('content')
    if content is None:
        assert response.data == b''
        return
    assert response.mimetype in content
    _validate(response.get_json(), content[response.mimetype]['schema'])


def test_the_document_is_a_valid_openapi_3_0_document():
    assert _doc()['openapi'].startswith('3.0.')
    openapi_spec_validator.validate(_doc())


def test_every_route_is_documented_and_every_operation_is_a_route(service):
    app = app_mod.create_app(service)
    assert _routes(app) == set(_operations())


@pytest.mark.parametrize('path', ['/v1/openapi.json', '/v1/openapi.json/'])
def test_the_document_is_served_as_json_with_the_request_root_as_server(
        service, path):
    response = app_mod.create_app(service).test_client().get(path)
    assert response.status_code == 200
    assert response.mimetype == 'application/json'
    assert response.json == dict(_doc(),
                                 servers=[{'url': 'http://localhost'}])


def test_the_served_server_honours_the_forwarded_headers(service):
    headers = {'X-Forwarded-Host': 'inspector.example.com:5443',
               'X-Forwarded-Proto': 'https', 'X-Forwarded-Prefix': '/bm'}
    client = app_mod.create_app(service).test_client()
    response = client.get('/v1/openapi.json', headers=headers)
    assert response.json['servers'] == [
        {'url': 'https://inspector.example.com:5443/bm'}]


def test_the_document_path_does_not_shadow_the_version_documents(service):
    client = app_mod.create_app(service).test_client()
    assert [r['name'] for r in client.get('/v1').json['resources']] == [
        'continue', 'introspection', 'rules']
    response = client.get('/openapi.json')
    assert response.status_code == 404
    assert response.json == {
        'error': {'message': 'Version openapi.json not found.'}}


def test_every_operation_names_the_policy_rule_of_its_route():
    for (method, path), operation in _operations().items():
        flask_rule = re.sub(r'\{[^}]*\}', '<x>', path)
        assert operation['x-policy'] == policy.rule_for(
            method.upper(), flask_rule), (method, path)


def test_public_operations_ask_for_no_credential_and_others_may_refuse():
    for key, operation in _operations().items():
        codes = set(operation['responses'])
        if operation['x-policy'] in policy.PUBLIC_RULES:
            assert operation['security'] == [], key
            assert not codes & {'401', '403'}, key
        else:
            assert 'security' not in operation, key
            assert {'401', '403'} <= codes, key


def test_every_operation_documents_the_microversion_header_and_errors():
    for key, operation in _operations().items():
        names = {_resolve(p)['name'] for p in operation['parameters']}
        assert VERSION in names, key
        assert {'400', '406'} <= set(operation['responses']), key
        if 'requestBody' in operation:
            assert '413' in operation['responses'], key


def test_every_documented_response_carries_the_version_headers():
    for key, operation in _operations().items():
        for code, response in operation['responses'].items():
            assert set(_resolve(response)['headers']) == {
                'X-OpenStack-Ironic-Inspector-API-Minimum-Version',
                'X-OpenStack-Ironic-Inspector-API-Maximum-Version'}, (key,
                                                                      code)


def test_the_enums_are_the_codes_states_and_rule_plugins():
    schemas = _doc()['components']['schemas']
    # NOTE: the shipped plugins; the test venv also has an upstream-style
    # plugin package (tests/plugins/upstream_style).
    loaded = plugins.Plugins(upstream_plugins=False)
    assert schemas['State']['enum'] == list(st.STATES)
    state_pattern = _doc()['components']['parameters']['State']['schema']
    assert all(re.fullmatch(state_pattern['pattern'], s) for s in st.STATES)
    assert re.fullmatch(state_pattern['pattern'], ','.join(st.STATES))
    assert schemas['Condition']['properties']['op']['enum'] == \
        loaded.condition_names
    assert schemas['Action']['properties']['action']['enum'] == \
        loaded.action_names


def test_the_versions_are_the_supported_microversions():
    headers = _doc()['components']['headers']
    assert _doc()['info']['version'] == versions.fmt(versions.CURRENT)
    assert headers['MinimumVersion']['schema']['enum'] == [
        versions.fmt(versions.MINIMUM)]
    assert headers['MaximumVersion']['schema']['enum'] == [
        versions.fmt(versions.CURRENT)]


# --- sample responses of the real application --------------------------


def _sample(method, url, status, **kwargs):
    return pytest.param(Sample(method, url, status, kwargs),
                        id='%s %s %d' % (method, url, status))


SAMPLES = [
    _sample('GET', '/', 200),
    _sample('GET', '/', 400, headers={VERSION: '1.x'}),
    _sample('GET', '/', 406, headers={VERSION: '1.99'}),
    _sample('GET', '/v1', 200),
    _sample('GET', '/v1/', 200),
    _sample('GET', '/v2', 404),
    _sample('GET', '/v1/openapi.json', 200),
    _sample('POST', '/v1/continue', 200, json=RAMDISK),
    _sample('POST', '/v1/continue', 400, json=[RAMDISK]),
    _sample('POST', '/v1/continue', 400, data='{"inventory":'),
    _sample('POST', '/v1/continue', 400, json={'inventory': {}}),
    _sample('POST', '/v1/continue', 400, json=STRANGER),
    _sample('POST', '/v1/continue', 413, data='"%s"' % ('x' * 8192)),
    _sample('GET', '/v1/introspection', 200),
    _sample('GET', '/v1/introspection?state=finished,error&limit=1', 200),
    _sample('GET', '/v1/introspection?limit=-1', 400),
    _sample('GET', '/v1/introspection?state=done', 400),
    _sample('GET', '/v1/introspection?marker={unknown}', 404),
    _sample('POST', '/v1/introspection/{waiting}?manage_boot=maybe', 400),
    _sample('POST', '/v1/introspection/{waiting}', 503),  # Ironic: 503
    _sample('GET', '/v1/introspection/{waiting}', 200),
    _sample('GET', '/v1/introspection/{finished}', 200),
    _sample('GET', '/v1/introspection/{errored}', 200),
    _sample('GET', '/v1/introspection/{unknown}', 404),
    _sample('POST', '/v1/introspection/{waiting}/abort', 202),
    _sample('POST', '/v1/introspection/{unknown}/abort', 404),
    _sample('GET', '/v1/introspection/{finished}/data', 200),
    _sample('GET', '/v1/introspection/{errored}/data', 404),
    _sample('GET', '/v1/introspection/{finished}/data/unprocessed', 200),
    _sample('POST', '/v1/introspection/{finished}/data/unprocessed', 202),
    _sample('POST', '/v1/introspection/{finished}/data/unprocessed', 202,
            json=RAMDISK),
    _sample('POST', '/v1/introspection/{finished}/data/unprocessed', 400,
            json=[RAMDISK]),
    _sample('POST', '/v1/introspection/{waiting}/data/unprocessed', 400),
    _sample('POST', '/v1/introspection/{unknown}/data/unprocessed', 404),
    _sample('GET', '/v1/rules', 200),
    _sample('POST', '/v1/rules', 201, json=RULE),
    _sample('POST', '/v1/rules', 200, json=RULE, headers={VERSION: '1.5'}),
    _sample('POST', '/v1/rules', 400, json=dict(RULE, actions=[])),
    _sample('POST', '/v1/rules', 409, json=dict(RULE, uuid='{rule}')),
    _sample('POST', '/v1/rules', 413,
            json=dict(RULE, description='x' * 8192)),
    _sample('GET', '/v1/rules/{rule}', 200),
    _sample('GET', '/v1/rules/{unknown}', 404),
    _sample('DELETE', '/v1/rules/{rule}', 204),
    _sample('DELETE', '/v1/rules/{unknown}', 404),
    _sample('DELETE', '/v1/rules', 204),
]


@pytest.fixture
def world(service_conf, put_node):
    """A Service keeping data in SQL, with a node waiting for its ramdisk,
    a finished node with stored data, a failed node and a rule."""
    service_conf.set_override('store_data', 'database', group='processing')
    service_conf.set_override('max_request_bytes', 4096)
    svc = service_mod.Service(service_conf)
    svc.start(workers=False, periodic_jobs=False)
    client = app_mod.create_app(svc).test_client()
    names = {'unknown': UNKNOWN, 'waiting': put_node(st.WAITING, [MAC]),
             'finished': put_node(st.FINISHED), 'errored': put_node(st.ERROR)}
    for processed in (True, False):
        svc.store.transaction(svc.data_store.save, names['finished'],
                              RAMDISK, processed)
    names['rule'] = client.post('/v1/rules', json=RULE).json['uuid']
    yield client, names
    svc.shutdown()


def _fill(value, names):
    """``value`` with ``'{name}'`` strings replaced by the world's ids."""
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    if isinstance(value, str) and re.fullmatch(r'\{\w+\}', value):
        return names[value[1:-1]]
    return value


@pytest.mark.parametrize('sample', SAMPLES)
def test_a_sample_response_of_the_app_matches_the_document(world, sample):
    client, names = world
    response = client.open(sample.url.format(**names), method=sample.method,
                           **_fill(sample.kwargs, names))
    assert response.status_code == sample.status, response.data
    _assert_documented(response, *_operation_of(sample.method, sample.url))


def test_the_samples_cover_every_operation_with_a_success():
    succeeded = {_operation_of(s.method, s.url) for s in
                 (p.values[0] for p in SAMPLES) if s.status < 300}
    tried = {_operation_of(p.values[0].method, p.values[0].url)
             for p in SAMPLES}
    assert tried == set(_operations())
    assert succeeded == set(_operations()) - NEEDS_IRONIC


@pytest.fixture
def basic_client(service_conf, tmp_path):
    """The app under ``http_basic`` with a user file nobody can use."""
    user_file = tmp_path / 'htpasswd'
    user_file.write_text('# nobody\n')
    service_conf.set_override('auth_strategy', 'http_basic')
    service_conf.set_override('http_basic_auth_user_file', str(user_file))
    svc = service_mod.Service(service_conf)
    svc.start(workers=False, periodic_jobs=False)
    yield app_mod.create_app(svc).test_client()
    svc.shutdown()


def test_without_credentials_only_the_public_operations_answer(
        basic_client):
    for (method, path), operation in _operations().items():
        url = re.sub(r'\{[^}]*\}', UNKNOWN,
                     path.replace('{version}', 'v1'))
        response = basic_client.open(url, method=method.upper())
        public = operation['x-policy'] in policy.PUBLIC_RULES
        assert (response.status_code == 401) is not public, (method, path)
        _assert_documented(response, method, path)
