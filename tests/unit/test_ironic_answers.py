"""Ironic's answers as :mod:`inspector_ha.ironic.answers` reads them: as
``http.client`` reads them (status, headers, body, whether the
connection closes), for the forms HTTP allows, and over a kept-alive
connection to a real server."""

import http.client
import io

import pytest

from inspector_ha.ironic import answers
from inspector_ha.ironic import transport

import httpfakes

IRONIC_HEADERS = (
    b'Date: Sat, 28 Nov 2026 14:00:00 GMT\r\nServer: cheroot/10\r\n'
    b'Content-Type: application/json\r\n'
    b'OpenStack-API-Version: baremetal 1.80\r\n'
    b'X-OpenStack-Ironic-API-Version: 1.80\r\n'
    b'x-openstack-request-id: req-0b8f6c2e\r\n')
#: (name, bytes of the answer, method) in the forms an answer can take.
FORMS = [
    ('a length', b'HTTP/1.1 200 OK\r\n' + IRONIC_HEADERS +
     b'Content-Length: 13\r\n\r\n{"uuid": "n"}', 'GET'),
    ('chunks', b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
     b'5\r\n{"a":\r\n3\r\n 1}\r\n0\r\n\r\n', 'GET'),
    ('no length: up to the close', b'HTTP/1.1 200 OK\r\n\r\n{"a": 1}', 'GET'),
    ('the server closes', b'HTTP/1.1 409 Conflict\r\nConnection: close\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'PUT'),
    ('HTTP/1.0', b'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}', 'GET'),
    ('HTTP/1.0 kept alive', b'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('no content', b'HTTP/1.1 204 No Content\r\n\r\n', 'PUT'),
    ('a HEAD', b'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n', 'HEAD'),
    ('100 Continue first', b'HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\n'
     b'HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n', 'PUT'),
    ('a redirect', b'HTTP/1.1 307 Temporary Redirect\r\n'
     b'Location: http://elsewhere/v1\r\nContent-Length: 0\r\n\r\n', 'GET'),
    ('bare LF line ends', b'HTTP/1.1 200 OK\nContent-Length: 2\n\n{}', 'GET'),
    ('a length sent twice', b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('chunked said twice', b'HTTP/1.1 200 OK\r\nTransfer-Encoding: '
     b'chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
     'GET'),
    ('keep-alive then close', b'HTTP/1.1 200 OK\r\nConnection: keep-alive'
     b'\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}', 'GET'),
    ('a folded field', b'HTTP/1.1 200 OK\r\nX-Long: one\r\n  two\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('a line with no colon', b'HTTP/1.1 200 OK\r\nbogus\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('a line with no name', b'HTTP/1.1 200 OK\r\n: v\r\n  folded\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('blanks around values', b'HTTP/1.1 200 OK\r\nTransfer-Encoding: '
     b'chunked \r\nX-A:\t a \r\nContent-Length: 2\r\n\r\n{}', 'GET'),
    ('HTTP/1.0 closing but Keep-Alive', b'HTTP/1.0 200 OK\r\nConnection: '
     b'close\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\n{}',
     'GET'),
    ('HTTP/1.0 Proxy-Connection', b'HTTP/1.0 200 OK\r\nProxy-Connection: '
     b'keep-alive\r\nContent-Length: 2\r\n\r\n{}', 'GET'),
    ('HTTP/1.0 empty Keep-Alive', b'HTTP/1.0 200 OK\r\nKeep-Alive:\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('a lone CR ends a line', b'HTTP/1.1 200 OK\r\nX-A: 1\r'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('a lone CR then CRLF: a blank line', b'HTTP/1.1 200 OK\r\nX-A: 1\r'
     b'\r\nContent-Length: 2\r\n\r\n{}tail', 'GET'),
    ('a close after a lone CR', b'HTTP/1.1 200 OK\r\nX-A: 1\rConnection: '
     b'close\r\nContent-Length: 2\r\n\r\n{}', 'GET'),
    ('a lone CR in a folded field', b'HTTP/1.1 200 OK\r\nContent-Length: '
     b'2\r\nX: a\r\n b\rTransfer-Encoding: chunked\r\n\r\n{}', 'GET'),
    ('a lone CR in the status line', b'HTTP/1.1 200 OK\rX-A: 1\r\n'
     b'Content-Length: 2\r\n\r\n{}', 'GET'),
    ('a lone CR at the end', b'HTTP/1.1 200 OK\r\nX-A: 1\r', 'GET'),
    ('a lone CR before the body', b'HTTP/1.1 200 OK\r\nContent-Length: 2'
     b'\r\n\r{}', 'GET'),
    ('99 header lines', b'HTTP/1.1 200 OK\r\n' + b''.join(
        b'X-%d: 1\r\n' % i for i in range(98)) + b'Content-Length: 2\r\n'
     b'\r\n{}', 'GET'),
]


class _Socket:
    def __init__(self, data):
        self._data = data

    def makefile(self, mode):
        return io.BytesIO(self._data)


def _read(cls, data, method='GET'):
    answer = cls(_Socket(data), method=method)
    answer.begin()
    try:
        return answer, answer.read()
    except http.client.HTTPException as exc:
        return answer, type(exc)


@pytest.mark.parametrize('data,method', [f[1:] for f in FORMS],
                         ids=[f[0] for f in FORMS])
def test_an_answer_is_read_as_http_client_reads_it(data, method):
    ours, body = _read(answers.Answer, data, method)
    theirs, their_body = _read(http.client.HTTPResponse, data, method)
    assert (ours.status, ours.reason, ours.version, ours.will_close,
            ours.chunked, ours.length, body) == (
        theirs.status, theirs.reason, theirs.version, theirs.will_close,
        theirs.chunked, theirs.length, their_body)
    assert ours.headers.items() == theirs.headers.items()
    assert len(ours.headers) == len(theirs.headers)
    for name in ('content-type', 'Location', 'X-Missing', 'content-length',
                 'CONNECTION', 'x-long'):
        assert ours.getheader(name) == theirs.getheader(name)
        assert ours.headers.get(name) == theirs.headers.get(name)
        assert (name in ours.headers) == (name in theirs.headers)


def test_a_name_is_found_in_any_case_its_first_field_its_value():
    answer, _body = _read(answers.Answer, b'HTTP/1.1 200 OK\r\nVary: a\r\n'
                          b'vary: b\r\nContent-Length: 0\r\n\r\n')
    assert answer.headers['VARY'] == answer.headers.get('vary') == 'a'
    assert answer.getheader('Vary') == 'a, b'
    assert answer.headers.get_all('vary') == ['a', 'b']
    assert 'Content-Length' in answer.headers and 'Etag' not in answer.headers


@pytest.mark.parametrize('data,error', [
    (b'HTTP/1.1 200 OK\r\n' + b''.join(
        b'X-%d: 1\r\n' % i for i in range(100)) + b'\r\n',
     http.client.HTTPException),
    (b'HTTP/1.1 200 OK\r\nX: ' + b'a' * 70000 + b'\r\n\r\n',
     http.client.LineTooLong),
    (b'SPDY/3 200 OK\r\n\r\n', http.client.BadStatusLine),
], ids=['100 header lines', 'a line too long', 'not HTTP'])
def test_an_answer_http_client_refuses_is_refused_alike(data, error):
    for cls in (answers.Answer, http.client.HTTPResponse):
        with pytest.raises(error) as raised:
            _read(cls, data)
        assert type(raised.value) is error


class _Ironic(httpfakes.JsonHandler):
    """Answers every GET with its path, on one kept-alive connection,
    and counts the connections."""

    protocol_version = 'HTTP/1.1'
    connections = 0

    def setup(self):
        type(self).connections += 1
        super().setup()

    def do_GET(self):
        self.reply(200, {'path': self.path})


class _Adapter:
    """What :class:`transport.Transport` reads of keystoneauth's
    adapter: an endpoint, no auth, a timeout."""

    auth = None
    default_microversion = '1.81'

    def __init__(self, url):
        self._url = url
        self.session = type('S', (), {'timeout': 5, 'auth': None})()

    def get_endpoint(self):
        return self._url


def test_calls_share_one_kept_alive_connection_read_as_answers():
    assert transport._Connection.response_class is answers.Answer
    _Ironic.connections = 0
    with httpfakes.serving(_Ironic) as url:
        calls = transport.Transport(_Adapter(url + '/v1'))
        try:
            for i in range(3):
                assert calls.call('GET', '/nodes/%d' % i, None) == {
                    'path': '/v1/nodes/%d' % i}
            assert _Ironic.connections == 1
        finally:
            calls.close()
