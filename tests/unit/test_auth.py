"""HTTP basic authentication on a real Service, with a real htpasswd file.

The file is written with bcrypt in ``tmp_path``; the keystone strategy
and the policy rules are in ``test_policy.py``.
"""

import base64
import pathlib
import socket
import subprocess
import sys

import bcrypt
from oslo_config import cfg
import pytest
import yaml

from inspector_ha.api import app as app_mod
from inspector_ha.api import auth
from inspector_ha import conf as conf_mod
from inspector_ha.fsm import states as st

MIN_HEADER = 'X-OpenStack-Ironic-Inspector-API-Minimum-Version'
KUBERNETES_CONFIG = (pathlib.Path(__file__).resolve().parents[2] /
                     'deploy' / 'kubernetes' / 'base' / 'config.yaml')
CHALLENGE = 'Basic realm="Baremetal API"'


def _entry(user, password, prefix=None):
    crypted = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4))
    if prefix:
        crypted = prefix.encode() + crypted[4:]
    return '%s:%s\n' % (user, crypted.decode())


def _basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode())
    return {'Authorization': 'Basic ' + token.decode()}


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / 'htpasswd'
    path.write_text('# operators\n' + _entry('alice', 'secret') +
                    _entry('bob', 'hunter2', prefix='$2y$'))
    return path


@pytest.fixture
def basic_conf(service_conf, user_file):
    service_conf.set_override('auth_strategy', 'http_basic')
    service_conf.set_override('http_basic_auth_user_file', str(user_file))
    return service_conf


@pytest.fixture
def client(basic_conf, service):
    return app_mod.create_app(service).test_client()


def _assert_refused(resp, message):
    assert resp.status_code == 401
    assert resp.get_json() == {'error': {'message': message}}
    assert resp.headers['WWW-Authenticate'] == CHALLENGE
    assert resp.headers[MIN_HEADER] == '1.0'


def test_a_request_without_credentials_is_a_401_with_a_basic_challenge(
        client):
    _assert_refused(client.get('/v1/rules'), 'Authorization required')


def test_a_wrong_password_is_a_401(client):
    _assert_refused(client.get('/v1/rules',
                               headers=_basic('alice', 'wrong')),
                    auth.BAD_CREDENTIAL)


def test_an_unknown_user_is_a_401_with_the_same_message(client):
    _assert_refused(client.get('/v1/rules',
                               headers=_basic('mallory', 'secret')),
                    auth.BAD_CREDENTIAL)


@pytest.mark.parametrize('value, message', [
    ('Bearer abc', 'Unsupported authorization type "Bearer"'),
    ('Basic !!!not-base64', 'Could not decode authorization token'),
    ('Basic ' + base64.b64encode(b'no-colon').decode(),
     'Invalid authorization token'),
])
def test_a_malformed_authorization_header_is_a_401(client, value, message):
    _assert_refused(client.get('/v1/rules',
                               headers={'Authorization': value}), message)


def test_a_password_longer_than_bcrypt_allows_is_a_401_not_a_500(client):
    _assert_refused(client.get('/v1/rules',
                               headers=_basic('alice', 'x' * 100)),
                    auth.BAD_CREDENTIAL)


def test_a_valid_credential_reaches_the_endpoint(client, put_node):
    uuid = put_node(st.ERROR)
    resp = client.get('/v1/introspection/' + uuid,
                      headers=_basic('alice', 'secret'))
    assert resp.status_code == 200
    assert resp.get_json()['uuid'] == uuid


def test_a_2y_hash_as_written_by_htpasswd_is_accepted(client):
    resp = client.get('/v1/rules', headers=_basic('bob', 'hunter2'))
    assert resp.status_code == 200


@pytest.mark.parametrize('method, path', [
    ('GET', '/'), ('GET', '/v1'), ('GET', '/v1/'), ('HEAD', '/')])
def test_the_version_documents_need_no_credential(client, method, path):
    assert client.open(path, method=method).status_code == 200


def test_continue_needs_no_credential(client):
    resp = client.post('/v1/continue', json={'inventory': {}})
    assert resp.status_code == 400  # the lookup fails: no credential asked


def test_an_unknown_path_is_a_404_not_a_401(client):
    assert client.get('/v1/nothing/here').status_code == 404


def test_the_user_file_is_read_again_on_every_request(client, user_file):
    headers = _basic('carol', 'new')
    assert client.get('/v1/rules', headers=headers).status_code == 401
    user_file.write_text(_entry('carol', 'new'))
    assert client.get('/v1/rules', headers=headers).status_code == 200
    old = client.get('/v1/rules', headers=_basic('alice', 'secret'))
    assert old.status_code == 401


def test_a_user_file_gone_after_start_is_a_500_not_an_open_door(
        client, user_file):
    user_file.unlink()
    resp = client.get('/v1/rules', headers=_basic('alice', 'secret'))
    assert resp.status_code == 500
    assert resp.get_json() == {'error': {'message': 'Internal server error'}}


def test_the_first_line_of_a_user_wins(client, user_file):
    user_file.write_text(_entry('alice', 'first') + _entry('alice', 'last'))
    assert client.get('/v1/rules',
                      headers=_basic('alice', 'first')).status_code == 200
    assert client.get('/v1/rules',
                      headers=_basic('alice', 'last')).status_code == 401


def test_the_app_is_not_built_without_a_readable_user_file(basic_conf,
                                                           service, tmp_path):
    basic_conf.set_override('http_basic_auth_user_file',
                            str(tmp_path / 'missing'))
    with pytest.raises(auth.UserFileError, match='missing'):
        app_mod.create_app(service)


def test_the_app_is_not_built_with_a_non_bcrypt_entry(basic_conf, service,
                                                      user_file):
    user_file.write_text('eve:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n')
    with pytest.raises(auth.UserFileError, match='bcrypt'):
        app_mod.create_app(service)


def test_noauth_asks_for_nothing(service_conf, service):
    client = app_mod.create_app(service).test_client()
    assert client.get('/v1/rules').status_code == 200


def test_keystone_is_the_default_of_a_configuration_file(tmp_path):
    from oslo_config import cfg
    from inspector_ha import conf as conf_mod
    path = tmp_path / 'inspector-ha.conf'
    path.write_text('[DEFAULT]\nlisten_port = 5050\n')
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf(['--config-file', str(path)])
    assert conf.auth_strategy == 'keystone'


def test_the_embedded_default_is_noauth_on_loopback(tmp_path, monkeypatch):
    from oslo_config import cfg
    from inspector_ha.cmd import embedded
    from inspector_ha import conf as conf_mod
    monkeypatch.setenv('INSPECTOR_HA_STATE', str(tmp_path))
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([])
    embedded.apply(conf)
    assert (conf.auth_strategy, conf.listen_address) == ('noauth',
                                                         '127.0.0.1')


@pytest.mark.parametrize('address, warned', [
    ('127.0.0.1', False), ('::1', False), ('localhost', False),
    ('::', True), ('0.0.0.0', True), ('192.0.2.1', True),
    ('inspector.example.com', True)])
def test_noauth_off_loopback_is_a_warning(service_conf, service, caplog,
                                          address, warned):
    service_conf.set_override('listen_address', address)
    caplog.set_level('WARNING', logger='inspector_ha.api.auth')
    app_mod.create_app(service)
    assert ('auth_strategy is noauth' in caplog.text) is warned


def _api_exit(tmp_path, extra):
    """``inspector-ha`` with a configuration file of the keystone
    strategy (the default) and ``extra``; its exit status and stderr."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    path = tmp_path / 'inspector-ha.conf'
    path.write_text(
        '[DEFAULT]\ntransport_url = fake://\nstate_path = %s\n'
        'listen_port = %d\n[database]\nconnection = sqlite:///%s\n'
        '[coordination]\nbackend_url = file://%s\n%s' % (
            tmp_path, port, tmp_path / 'db.sqlite', tmp_path / 'coord',
            extra))
    proc = subprocess.run(
        [pathlib.Path(sys.executable).parent / 'inspector-ha',
         '--config-file', str(path)], capture_output=True, text=True,
        timeout=60)
    return proc.returncode, [line for line in proc.stderr.splitlines()
                             if line.startswith('inspector-ha: error: ')]


def test_keystone_without_an_auth_plugin_is_one_line_at_start(tmp_path):
    code, lines = _api_exit(tmp_path, '')
    assert code == 2
    assert lines == ['inspector-ha: error: auth_strategy is keystone and '
                     '[keystone_authtoken] names no auth plugin: %s'
                     % auth.AUTHTOKEN_HINT]


def test_keystone_with_a_half_made_auth_plugin_names_what_it_lacks(
        tmp_path):
    code, lines = _api_exit(tmp_path, '[keystone_authtoken]\n'
                                      'auth_type = password\n')
    assert code == 2 and len(lines) == 1
    assert 'auth_url' in lines[0]


def test_the_shipped_kubernetes_configuration_is_not_half_made(tmp_path):
    docs = list(yaml.safe_load_all(KUBERNETES_CONFIG.read_text()))
    files = []
    for doc in docs:
        for name, text in (doc.get('data') or doc.get('stringData')).items():
            files.append(tmp_path / name)
            files[-1].write_text(text)
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf(['--config-file=%s' % f for f in files], project='inspector-ha')
    assert conf.auth_strategy == 'keystone'
    auth.check_keystone(conf)
