"""The API's request id follows a request into the worker's log lines.

Each call gets a request id as oslo.middleware gives one (and takes a
client's or Ironic's as the global one); it is kept in the queued request
row and made the worker thread's oslo.context while the row is handled.
"""

import logging

from oslo_config import cfg
from oslo_context import context as context_mod
from oslo_log import formatters
from oslo_middleware import request_id as oslo_request_id
import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.api import request_ids
from inspector_ha.cmd import common
from inspector_ha.common import logctx
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st

GLOBAL = 'req-1b3a7b4e-9f6f-4d8e-8d2c-3e5f7a9b1c2d'


@pytest.fixture
def client(service):
    yield app_mod.create_app(service).test_client()
    logctx.clear()


def _abort(client, put_node, headers=None):
    uuid = put_node(st.WAITING)
    resp = client.post('/v1/introspection/%s/abort' % uuid,
                       headers=headers or {})
    assert resp.status_code == 202
    return uuid, resp


def _row(service, uuid):
    [row] = service.store.transaction(ledger.for_node, uuid)
    return row


def test_every_answer_has_a_request_id_header(client):
    for resp in (client.get('/'), client.get('/v1/nothing'),
                 client.post('/v1/continue', data=b'[' * 1000)):
        assert resp.headers['X-OpenStack-Request-ID'].startswith('req-')


def _environ(method, given=None):
    """A WSGI environ of a ``method`` request for ``/`` with ``given``
    headers."""
    environ = {'REQUEST_METHOD': method, 'PATH_INFO': '/', 'SERVER_NAME':
               'x', 'SERVER_PORT': '80', 'wsgi.url_scheme': 'http'}
    environ.update(('HTTP_' + k.upper().replace('-', '_'), v)
                   for k, v in (given or {}).items())
    return environ


def _ids_and_headers(middleware, given, own_header, method):
    """What ``middleware`` leaves in the environ, and the answer's body
    and headers, for a ``method`` request with ``given`` headers."""
    seen = {}

    def app(environ, start_response):
        seen.update((k, v) for k, v in environ.items()
                    if k.startswith('openstack.'))
        start_response('200 OK', [('Content-Type', 'text/plain')] +
                       ([('X-OpenStack-Request-ID', 'mine')]
                        if own_header else []))
        return [b'ok']

    answered = []
    body = b''.join(middleware(app)(_environ(method, given),
                                    lambda s, h, e=None: answered.extend(h)))
    request_id = seen.pop('openstack.request_id')
    headers = [(k.lower(), 'req' if v == request_id else v)
               for k, v in answered if k.lower() != 'content-length']
    return body, request_id[:4], seen, sorted(headers)


@pytest.mark.parametrize('given,own_header,method', [
    ({}, False, 'GET'), ({'X-OpenStack-Request-ID': GLOBAL}, False, 'GET'),
    ({'X-OpenStack-Request-ID': GLOBAL.upper()}, False, 'GET'),
    ({'X-OpenStack-Request-ID': GLOBAL + 'a'}, False, 'GET'),
    ({'X-OpenStack-Request-ID': 'req-1'}, False, 'GET'),
    ({}, True, 'GET'), ({}, False, 'HEAD')],
    ids=['none given', 'a global id', 'in upper case', 'too long',
         'not a uuid', 'the answer has its own', 'a HEAD request'])
def test_request_ids_are_given_as_oslo_middleware_gives_them(
        given, own_header, method):
    args = given, own_header, method
    assert _ids_and_headers(request_ids.RequestIds, *args) == \
        _ids_and_headers(oslo_request_id.RequestId, *args)


def _lazy_head(middleware):
    """The status, headers and body ``middleware`` answers a HEAD
    request with, to an app that starts its answer when iterated."""
    def app(environ, start_response):
        start_response('200 OK', [('Content-Length', '5')])
        yield b'hello'

    answered = []
    body = b''.join(middleware(app)(_environ('HEAD'), lambda s, h, e=None:
                                    answered.append((s, h))))
    [(status, headers)] = answered
    return status, sorted(k.lower() for k, _v in headers), body


def test_a_head_request_to_an_app_that_answers_lazily_is_answered():
    assert _lazy_head(request_ids.RequestIds) == \
        _lazy_head(oslo_request_id.RequestId) == (
            '200 OK', ['content-length', 'x-openstack-request-id'], b'')


def test_a_head_answer_s_body_is_closed_and_not_sent():
    closed = []

    class Body(list):
        def close(self):
            closed.append(True)

    def app(environ, start_response):
        start_response('405 Method Not Allowed', [])
        return Body([b'not allowed'])

    assert list(request_ids.RequestIds(app)(_environ('HEAD'),
                                            lambda *a: None)) == []
    assert closed == [True]


def test_the_queued_request_keeps_the_api_and_global_request_ids(
        client, service, put_node):
    uuid, resp = _abort(client, put_node,
                        {'X-OpenStack-Request-ID': GLOBAL})
    row = _row(service, uuid)
    ctx = logctx.bind(row)
    assert ctx.request_id == resp.headers['X-OpenStack-Request-ID']
    assert ctx.global_request_id == GLOBAL
    assert context_mod.get_current() is ctx
    assert ledger.payload(row) == {}  # the ids are not part of the data


def test_a_request_queued_without_an_api_call_is_logged_under_its_id(
        service, put_node):
    uuid = put_node(st.WAITING)
    logctx.clear()
    row = service.store.transaction(ledger.add, uuid, st.ABORT, 1)
    row = _row(service, uuid)
    assert logctx.bind(row).request_id == 'req-%s' % row.id
    logctx.clear()


def test_a_worker_log_line_shows_the_ids_and_the_node(client, service,
                                                      put_node):
    log_conf = cfg.ConfigOpts()
    common.register_log_opts(log_conf)
    log_conf([])
    uuid, resp = _abort(client, put_node,
                        {'X-OpenStack-Request-ID': GLOBAL})
    logctx.bind(_row(service, uuid))
    record = logging.LogRecord('inspector_ha.engine.worker', logging.INFO,
                               __file__, 1, 'TRANSITION', None, None)
    line = formatters.ContextFormatter(config=log_conf).format(record)
    assert '[%s %s ' % (GLOBAL, resp.headers['X-OpenStack-Request-ID']) \
        in line
    assert '[node %s] TRANSITION' % uuid in line
