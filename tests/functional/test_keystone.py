"""``auth_strategy = keystone`` against a real Keystone (PyPI, SQLite,
fernet tokens), as a site runs it: two APIs and two workers behind the
shipped HAProxy, found in Keystone's catalog as
``baremetal-introspection``, and reaching Ironic through the catalog
too, with a password. Both services have endpoints in two regions; only
:data:`keystone.REGION`'s lead anywhere, so a client or a service that
ignores its region (or, for the service's Ironic, its
``valid_interfaces``) fails here.

The policy is upstream's defaults (``doc/migrating-from-ironic-inspector.md``):
each user of :data:`keystone.USERS` gets what its role gives there.
"""

import json
import subprocess
import time

from ironic_inspector_client import v1 as client_v1
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import pytest
import requests

import backends
import batch
import keystone
import needs
import ramdisk
import split

MIN_HEADER = 'X-OpenStack-Ironic-Inspector-API-Minimum-Version'


class Protected:
    """The site: Keystone's identities and catalog, and inspector-ha
    behind HAProxy with the keystone strategy, on PostgreSQL, RabbitMQ
    and Redis."""

    def __init__(self, tmp_path, site, ironic, obtain):
        self.site = site
        self.ironic = ironic
        site.register('baremetal', ironic.url, interface='internal')
        self.deployment = split.BehindHAProxy(
            tmp_path, ironic.url, obtain, apis=2, workers=2,
            conf=_keystone_conf(site))
        self.cluster = self.deployment.cluster
        self.url = self.deployment.url
        site.register('baremetal-introspection', self.url)
        self.nodes = {}
        self._short_issuer = None

    def client(self, user='alice'):
        """python-ironic-inspector-client as ``user``, with a password,
        finding the service in the catalog of its region."""
        auth = self.site.auth(user, keystone.USERS[user][0])['auth']
        return client_v1.ClientV1(
            session=ks_session.Session(auth=v3.Password(**auth)),
            region_name=keystone.REGION)

    def get(self, path, token=None, url=None, **headers):
        if token is not None:
            headers['X-Auth-Token'] = token
        return requests.get((url or self.url) + path, headers=headers,
                            timeout=30)

    def short_token(self, user, seconds):
        """A token of ``user`` that expires ``seconds`` after it is made."""
        if self._short_issuer is None:
            self._short_issuer = self.site.keystone.issuer(seconds)
        return self.site.token(user, auth_url=self._short_issuer)

    def close(self):
        self.deployment.close()
        for uuid in self.nodes:
            self.ironic.delete_node(uuid)


def _keystone_conf(site):
    """What an operator writes for Keystone: the middleware's service
    user, and Ironic through the catalog of one region's internal
    interface (no ``endpoint_override``)."""
    return {
        'DEFAULT': {'auth_strategy': 'keystone'},
        'keystone_authtoken': dict(site.service_conf('inspector'),
                                   www_authenticate_uri=site.keystone.url),
        'ironic': dict(site.service_conf('inspector'),
                       region_name=keystone.REGION,
                       valid_interfaces='internal', endpoint_override=None),
    }


@pytest.fixture(scope='module')
def site(obtain_backend):
    server = keystone.Keystone()
    try:
        obtain_backend(server.start)
        yield keystone.Site(server)
    finally:
        server.close()


@pytest.fixture(scope='module')
def protected(site, tmp_path_factory, ironic, obtain_backend):
    protected = Protected(tmp_path_factory.mktemp('keystone'), site, ironic,
                          obtain_backend)
    try:
        yield protected
    finally:
        protected.close()


@pytest.fixture(scope='module')
def introspected(protected):
    """Three nodes introspected by the client with a password; the
    ramdisks post with no token."""
    payloads = batch.create_nodes(protected.ironic, 3)
    protected.nodes.update(payloads)
    client = protected.client()
    disks = ramdisk.Ramdisks(protected.ironic.url, [protected.url],
                             payloads).start()
    try:
        for uuid in payloads:
            client.introspect(uuid)
        finished = client.wait_for_finish(list(payloads), retry_interval=1,
                                          max_retries=120)
    finally:
        disks.stop()
    return finished


def test_a_password_client_introspects_a_batch_reaching_ironic_by_region(
        protected, introspected):
    assert {u: (s['finished'], s['error'])
            for u, s in introspected.items()} == {
        u: (True, None) for u in introspected}
    uuid = sorted(introspected)[0]
    data = protected.client().get_data(uuid)
    assert data['inventory']['interfaces']
    assert protected.ironic.get_node(uuid)['properties']['memory_mb']


def test_a_password_client_creates_lists_and_deletes_rules(protected):
    client = protected.client()
    rule = client.rules.create(
        [{'op': 'eq', 'field': 'memory_mb', 'value': 1024}],
        [{'action': 'fail', 'message': 'no'}], description='keystone')
    assert rule['uuid'] in [r['uuid'] for r in client.rules.get_all()]
    client.rules.delete(rule['uuid'])
    assert rule['uuid'] not in [r['uuid'] for r in client.rules.get_all()]


def _openstack(site, user, *args):
    cli = needs.openstack_cli()
    auth = site.auth(user, keystone.USERS[user][0])['auth']
    options = ['--os-auth-type', 'password',
               '--os-region-name', keystone.REGION]
    for name, value in auth.items():
        options += ['--os-%s' % name.replace('_', '-'), value]
    proc = subprocess.run([str(cli), *options, 'baremetal', 'introspection',
                           *args], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_openstack_cli_with_a_password_lists_statuses_and_saves_data(
        protected, introspected):
    uuid = sorted(introspected)[0]
    listed = json.loads(_openstack(protected.site, 'alice', 'list', '-f',
                                   'json'))
    assert uuid in [row['UUID'] for row in listed]
    saved = json.loads(_openstack(protected.site, 'alice', 'data', 'save',
                                  uuid))
    assert saved['inventory']['interfaces']
    rules = json.loads(_openstack(protected.site, 'alice', 'rule', 'list',
                                  '-f', 'json'))
    assert isinstance(rules, list)


def test_a_request_without_a_token_is_a_401_naming_keystone(protected):
    resp = protected.get('/v1/introspection')
    assert resp.status_code == 401
    assert resp.json() == {'error': {'message': 'Authentication required'}}
    assert resp.headers[MIN_HEADER] == '1.0'
    assert resp.headers['WWW-Authenticate'] == (
        'Keystone uri="%s"' % protected.site.keystone.url)


@pytest.mark.parametrize('path', ['/', '/v1', '/v1/'])
def test_the_version_documents_need_no_token(protected, path):
    assert protected.get(path).status_code == 200


def test_continue_needs_no_token(protected):
    resp = requests.post(protected.url + '/v1/continue',
                         json={'inventory': {}}, timeout=30)
    assert resp.status_code == 400, resp.text


def test_a_revoked_token_is_a_401(protected):
    token = protected.site.token('alice')
    protected.site.revoke(token)
    assert protected.get('/v1/rules', token).status_code == 401


def test_an_expired_token_is_a_401(protected):
    token = protected.short_token('alice', 3)
    assert protected.get('/v1/rules', token).status_code == 200
    time.sleep(3.5)
    # NOTE: the middleware keeps a validated token for token_cache_time
    # (300 s) but never past the expiry the token itself carries.
    assert protected.get('/v1/rules', token).status_code == 401


def test_a_token_keystone_did_not_issue_is_a_401(protected):
    assert protected.get('/v1/rules', 'forged').status_code == 401


def test_a_client_cannot_forge_the_headers_of_a_validated_token(protected):
    forged = {'X-Identity-Status': 'Confirmed', 'X-Roles': 'admin',
              'X-Project-Id': 'p1', 'X-User-Id': 'u1',
              'OpenStack-System-Scope': 'all'}
    assert protected.get('/v1/rules', **forged).status_code == 401
    reader = protected.site.token('carol')
    assert protected.get('/v1/rules', reader, **forged).status_code == 403


#: ``(user, scope)``: a token of each upstream role.
ADMIN, MEMBER, READER, OTHER = (('alice', None), ('bob', None),
                                ('carol', None), ('dave', None))
SERVICE, SYSTEM_ADMIN, SYSTEM_READER = (('ironic', None), ('admin', 'system'),
                                        ('sysreader', 'system'))


@pytest.mark.parametrize('who, code', [
    (ADMIN, 200), (SERVICE, 200), (SYSTEM_ADMIN, 200), (READER, 403),
    (MEMBER, 403), (OTHER, 403)])
def test_rules_are_readable_by_admin_and_service_only(protected, who, code):
    resp = protected.get('/v1/rules', protected.site.token(*who))
    assert resp.status_code == code
    if code == 403:
        assert resp.json() == {
            'error': {'message': 'Access denied by policy'}}
        assert resp.headers[MIN_HEADER] == '1.0'


@pytest.mark.parametrize('who, code', [
    (ADMIN, 200), (SERVICE, 200), (SYSTEM_READER, 200), (SYSTEM_ADMIN, 200),
    (READER, 403), (MEMBER, 403), (OTHER, 403)])
def test_statuses_are_readable_by_system_readers_admins_and_services(
        protected, introspected, who, code):
    # NOTE: upstream's READER rule: a project-scoped reader reads nothing.
    token = protected.site.token(*who)
    uuid = sorted(introspected)[0]
    assert protected.get('/v1/introspection', token).status_code == code
    assert protected.get('/v1/introspection/' + uuid,
                         token).status_code == code


@pytest.mark.parametrize('who, allowed', [
    (ADMIN, True), (SERVICE, True), (READER, False), (MEMBER, False)])
def test_abort_needs_the_admin_rule(protected, introspected, who, allowed):
    uuid = sorted(introspected)[0]
    resp = requests.post(protected.url + '/v1/introspection/%s/abort' % uuid,
                         headers={'X-Auth-Token': protected.site.token(*who)},
                         timeout=30)
    # NOTE: a finished introspection cannot be aborted: past the policy,
    # the state machine refuses it.
    assert (resp.status_code != 403) is allowed, resp.text
    assert resp.status_code != 401


def test_an_operator_policy_file_overrides_a_default(protected):
    path = protected.cluster.workdir / 'policy.yaml'
    path.write_text('"introspection:rule:get": "role:reader"\n')
    api = protected.cluster.add_api(
        conf={'oslo_policy': {'policy_file': path}})
    try:
        _wait_listening(api)
        reader, other = (protected.site.token(*w) for w in (READER, OTHER))
        assert protected.get('/v1/rules', reader, url=api.url
                             ).status_code == 200
        assert protected.get('/v1/rules', other, url=api.url
                             ).status_code == 403
    finally:
        _stop(protected, api)


def _wait_listening(api):
    backends.wait_for(lambda: backends.port_open(
        '127.0.0.1', int(api.url.rsplit(':', 1)[1])), 60,
        message='API %s did not listen' % api.url)


def _stop(protected, api):
    """Stop an API added to the cluster by a test."""
    api.terminate()
    assert api.wait(30) == 0
    protected.cluster.apis.remove(api)


def test_an_ironic_the_catalog_names_that_does_not_answer_is_a_503(
        protected, introspected):
    # NOTE: REGION_ONE's baremetal endpoint is a closed port.
    api = protected.cluster.add_api(conf={'ironic': {
        'region_name': keystone.REGION_ONE, 'retry_count': 1,
        'retry_timeout': 0.01}})
    try:
        _wait_listening(api)
        resp = requests.post(
            api.url + '/v1/introspection/' + sorted(introspected)[0],
            headers={'X-Auth-Token': protected.site.token('alice')},
            timeout=60)
        assert resp.status_code == 503, resp.text
        assert resp.json()['error']['message'].startswith(
            'Service temporarily unavailable: ironic unavailable at the '
            'catalog of %s: ' % protected.site.keystone.url), resp.text
    finally:
        _stop(protected, api)
