"""The keystone strategy: real keystonemiddleware, real oslo.policy.

Keystone is a remote peer: :class:`KeystoneStub` answers token validation
(``GET /v3/auth/tokens``) for the tokens a test gives it and 404 for any
other. keystonemiddleware talks to it with the ``admin_token`` plugin, so
the headers the policy layer reads are set by the middleware itself after
validation, exactly as in production.
"""

import http.server
import threading

from keystoneauth1 import loading
from keystonemiddleware import auth_token
from oslo_policy import opts as policy_opts
import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.api import policy
from inspector_ha.fsm import states as st

import httpfakes

MIN_HEADER = 'X-OpenStack-Ironic-Inspector-API-Minimum-Version'
GROUP = 'keystone_authtoken'
ROLES = {'admin': ['admin', 'member', 'reader'],
         'member': ['member', 'reader'], 'reader': ['reader'],
         'service': ['service'], 'nobody': []}
UPSTREAM_NAMES = {
    'introspection', 'introspection:version', 'introspection:start',
    'introspection:status', 'introspection:abort', 'introspection:data',
    'introspection:reapply', 'introspection:continue',
    'introspection:rule:get', 'introspection:rule:create',
    'introspection:rule:delete'}


class _Validate(httpfakes.JsonHandler):
    def do_GET(self):
        token = self.server.tokens.get(self.headers.get('X-Subject-Token'))
        if self.path.split('?')[0] != '/v3/auth/tokens' or token is None:
            return self.reply(404, {'error': {'code': 404,
                                              'message': 'no such token'}})
        self.reply(200, {'token': token})


def _token(roles, system):
    domain = {'id': 'default', 'name': 'Default'}
    token = {'methods': ['password'], 'expires_at': '2099-01-01T00:00:00Z',
             'issued_at': '2020-01-01T00:00:00Z',
             'user': {'id': 'u1', 'name': 'alice', 'domain': domain},
             'roles': [{'id': r, 'name': r} for r in roles]}
    if system:
        token['system'] = {'all': True}
    else:
        token['project'] = {'id': 'p1', 'name': 'ops', 'domain': domain}
    return token


class KeystoneStub:
    """Token validation only; ``add(token_id, roles, system=False)``."""

    def __init__(self):
        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       _Validate)
        self._server.tokens = {}
        threading.Thread(target=self._server.serve_forever,
                         daemon=True).start()
        self.url = 'http://127.0.0.1:%d/v3' % self._server.server_address[1]

    def add(self, token_id, roles, system=False):
        self._server.tokens[token_id] = _token(roles, system)

    def close(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope='module')
def keystone():
    stub = KeystoneStub()
    for name, roles in ROLES.items():
        stub.add(name, roles)
    stub.add('system-admin', ROLES['admin'], system=True)
    stub.add('system-reader', ROLES['reader'], system=True)
    yield stub
    stub.close()


@pytest.fixture
def keystone_conf(service_conf, keystone):
    service_conf.register_opts(auth_token.list_opts()[0][1], group=GROUP)
    service_conf.register_opts(loading.get_auth_common_conf_options() +
                               loading.get_auth_plugin_conf_options(
                                   'admin_token'), group=GROUP)
    service_conf.register_opts(policy_opts.list_opts()[0][1],
                               group='oslo_policy')
    for name, value in [('auth_type', 'admin_token'),
                        ('endpoint', keystone.url), ('token', 'svc'),
                        ('www_authenticate_uri', keystone.url)]:
        service_conf.set_override(name, value, group=GROUP)
    service_conf.set_override('auth_strategy', 'keystone')
    return service_conf


@pytest.fixture
def client(keystone_conf, service):
    return app_mod.create_app(service).test_client()


def _as(token):
    return {'X-Auth-Token': token}


def test_a_request_without_a_token_is_a_401_json_error(client):
    resp = client.get('/v1/introspection')
    assert resp.status_code == 401
    assert resp.get_json() == {
        'error': {'message': 'Authentication required'}}
    assert resp.headers[MIN_HEADER] == '1.0'
    assert resp.headers['WWW-Authenticate'].startswith('Keystone uri=')


def test_a_token_keystone_does_not_know_is_a_401(client):
    assert client.get('/v1/introspection',
                      headers=_as('forged')).status_code == 401


def test_a_client_cannot_forge_the_headers_of_a_validated_token(client):
    forged = {'X-Identity-Status': 'Confirmed', 'X-Roles': 'admin',
              'X-Project-Id': 'p1', 'X-User-Id': 'u1',
              'OpenStack-System-Scope': 'all'}
    assert client.get('/v1/rules', headers=forged).status_code == 401
    forged.update(_as('reader'))
    assert client.get('/v1/rules', headers=forged).status_code == 403


@pytest.mark.parametrize('path', ['/', '/v1', '/v1/'])
def test_the_version_documents_need_no_token(client, path):
    assert client.get(path).status_code == 200


def test_continue_needs_no_token(client):
    assert client.post('/v1/continue',
                       json={'inventory': {}}).status_code == 400


@pytest.mark.parametrize('token, code', [
    ('admin', 200), ('service', 200), ('system-admin', 200),
    ('reader', 403), ('member', 403), ('nobody', 403)])
def test_rules_are_readable_by_admin_and_service_only(client, token, code):
    resp = client.get('/v1/rules', headers=_as(token))
    assert resp.status_code == code
    if code == 403:
        assert resp.get_json() == {
            'error': {'message': 'Access denied by policy'}}
        assert resp.headers[MIN_HEADER] == '1.0'


@pytest.mark.parametrize('token, code', [
    ('admin', 200), ('service', 200), ('system-reader', 200),
    ('system-admin', 200), ('reader', 403), ('member', 403),
    ('nobody', 403)])
def test_statuses_are_readable_by_system_readers_admins_and_services(
        client, put_node, token, code):
    # NOTE: upstream's READER rule: a project-scoped reader reads nothing.
    uuid = put_node(st.ERROR)
    assert client.get('/v1/introspection',
                      headers=_as(token)).status_code == code
    assert client.get('/v1/introspection/' + uuid,
                      headers=_as(token)).status_code == code


@pytest.mark.parametrize('token, code', [
    ('admin', 202), ('service', 202), ('reader', 403), ('member', 403)])
def test_abort_needs_the_admin_rule(client, put_node, token, code):
    uuid = put_node(st.WAITING)
    assert client.post('/v1/introspection/%s/abort' % uuid,
                       headers=_as(token)).status_code == code


def test_an_operator_policy_file_overrides_a_default(keystone_conf,
                                                     service, tmp_path):
    path = tmp_path / 'policy.yaml'
    path.write_text('"introspection:rule:get": "role:reader"\n')
    keystone_conf.set_override('policy_file', str(path), 'oslo_policy')
    client = app_mod.create_app(service).test_client()
    assert client.get('/v1/rules', headers=_as('reader')).status_code == 200
    assert client.get('/v1/rules', headers=_as('nobody')).status_code == 403


def test_every_route_of_the_app_has_a_rule_in_the_table(service):
    app = app_mod.create_app(service)
    missing = [(m, r.rule) for r in app.url_map.iter_rules()
               for m in r.methods - {'HEAD', 'OPTIONS'}
               if r.endpoint != 'static'
               and policy.route_key(m, r.rule) not in policy.ROUTES]
    assert not missing


def test_the_table_uses_upstreams_rule_names_only():
    registered = {rule.name for rule in policy.list_policies()}
    assert set(policy.ROUTES.values()) == UPSTREAM_NAMES
    assert UPSTREAM_NAMES <= registered


def test_a_route_missing_from_the_table_falls_back_to_the_status_rule():
    assert policy.rule_for('GET', '/v1/new/<x>') == 'introspection:status'
    assert policy.rule_for('HEAD', '/v1/rules/<uuid>/') == \
        'introspection:rule:get'


@pytest.mark.parametrize('public, allowed', [(True, True), (False, False)])
def test_public_rules_allow_only_requests_to_public_routes(
        keystone_conf, public, allowed):
    enforcer = policy.enforcer(keystone_conf)
    creds = policy.credentials({}, public)
    assert policy.authorized(enforcer, 'introspection:continue',
                             creds) is allowed
