"""The Ironic facade's REST helpers: which environment makes requests
look at it on every call, the CA bundle variables read once, and
Ironic's ``next`` links as paths of the baremetal endpoint. (The calls
themselves run against a real Ironic in the functional tests; a token
Ironic refuses, against a server that plays Keystone's revocation.)"""

import threading

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import plugin
from keystoneauth1 import session as ks_session

from inspector_ha.ironic import client
from inspector_ha.ironic import transport

import httpfakes


class _Session:
    verify = True


def test_requests_reads_the_environment_per_call_only_where_a_proxy_is_set():
    for name in ('HTTPS_PROXY', 'http_proxy', 'NO_PROXY', 'all_proxy'):
        assert client._trust_environment(_Session(), {name: 'x'}), name
    assert not client._trust_environment(_Session(), {'PATH': '/bin'})


def test_a_ca_bundle_variable_is_read_once_into_the_verify_setting():
    session = _Session()
    assert not client._trust_environment(session, {
        'CURL_CA_BUNDLE': '/curl.pem', 'REQUESTS_CA_BUNDLE': '/req.pem'})
    assert session.verify == '/req.pem'
    session = _Session()
    client._trust_environment(session, {'CURL_CA_BUNDLE': '/curl.pem'})
    assert session.verify == '/curl.pem'


def test_a_configured_ca_file_or_insecure_wins_over_the_variables():
    for configured in ('/conf.pem', False):
        session = _Session()
        session.verify = configured
        client._trust_environment(session, {'REQUESTS_CA_BUNDLE': '/r.pem'})
        assert session.verify == configured


def test_a_next_link_becomes_a_path_of_the_baremetal_endpoint():
    assert client._next_page(
        'http://ironic:6385/v1/ports?fields=address&limit=2&marker=abc'
    ) == '/ports?fields=address&limit=2&marker=abc'
    assert client._next_page(
        'https://cloud/baremetal/v1/ports?marker=abc') == '/ports?marker=abc'
    assert client._next_page(None) is None
    assert client._next_page('') is None


class _Tokens(plugin.BaseAuthPlugin):
    """An auth plugin whose token Keystone revoked: invalidating it gives
    the next one."""

    def __init__(self, *tokens):
        super().__init__()
        self._tokens = iter(tokens)
        self.token = next(self._tokens)

    def get_headers(self, session, **kwargs):
        return {'X-Auth-Token': self.token}

    def invalidate(self):
        self.token = next(self._tokens)
        return True


class _AcceptingOnly(httpfakes.JsonHandler):
    """Ironic that takes only the token ``new``: 401 for any other."""

    protocol_version = 'HTTP/1.1'
    seen = []

    def do_GET(self):
        token = self.headers.get('X-Auth-Token')
        self.seen.append(token)
        if token == 'new':
            self.reply(200, {'uuid': 'n'})
        else:
            self.reply(401, {'error_message': '{"faultstring": "no"}'})


def test_a_token_refused_with_401_is_renewed_and_the_call_made_again():
    with httpfakes.serving(_AcceptingOnly) as url:
        session = ks_session.Session(auth=_Tokens('old', 'new'))
        baremetal = ks_adapter.Adapter(
            session, endpoint_override=url + '/v1',
            default_microversion='1.81')
        calls = transport.Transport(baremetal)
        try:
            assert calls.call('GET', '/nodes/n', None) == {'uuid': 'n'}
        finally:
            calls.close()
        assert _AcceptingOnly.seen == ['old', 'new']


class _ClosedMidCall(httpfakes.JsonHandler):
    """Ironic during whose answer the caller's transport is closed; it
    notes when the caller closes the connection."""

    protocol_version = 'HTTP/1.1'
    transport = None
    hung_up = threading.Event()

    def do_GET(self):
        self.transport.close()
        self.reply(200, {'uuid': 'n'})

    def finish(self):
        super().finish()
        self.hung_up.set()


def test_a_connection_in_use_when_the_transport_closes_is_closed_after():
    with httpfakes.serving(_ClosedMidCall) as url:
        baremetal = ks_adapter.Adapter(
            ks_session.Session(), endpoint_override=url + '/v1')
        _ClosedMidCall.transport = transport.Transport(baremetal)
        assert _ClosedMidCall.transport.call('GET', '/nodes/n', None) == {
            'uuid': 'n'}
        assert _ClosedMidCall.hung_up.wait(10)


def test_query_parameters_are_encoded_as_requests_encodes_them():
    assert transport._query({'fields': 'uuid,address', 'gone': None,
                             'tag': ['a', 'b'], 'reset': True}) == (
        '?fields=uuid%2Caddress&tag=a&tag=b&reset=True')
    assert transport._query(None) == transport._query({'x': None}) == ''
