"""Ironic unreachable: the API answers 503 naming Ironic and its URL.

Nothing listens on the port Ironic is configured at (Ironic stopped); the
first call fails in keystoneauth's version discovery (``DiscoveryFailure``),
which used to be a 500.
"""

import contextlib
import socket

import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.common import retry
from inspector_ha import service as service_mod

UUID = '0a4e5b0e-4c52-4f55-9f41-6e2d8b0f0c6a'


def _closed_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture
def dead_ironic(service_conf):
    port = _closed_port()
    service_conf.set_override(
        'endpoint_override', 'http://admin:s3cret@127.0.0.1:%d' % port,
        group='ironic')
    service_conf.set_override('retry_count', 1, group='ironic')
    service_conf.set_override('retry_timeout', 0.01, group='ironic')
    return 'http://127.0.0.1:%d' % port


@contextlib.contextmanager
def _started(conf):
    """An API-only Service, once its read of Ironic's version ended."""
    svc = service_mod.Service(conf)
    svc.start(workers=False, periodic_jobs=False)
    try:
        svc.discovery.join(10)  # a failed attempt is logged at start
        yield svc
    finally:
        svc.shutdown()


@pytest.fixture
def client(dead_ironic, service_conf):
    with _started(service_conf) as svc:
        yield svc, app_mod.create_app(svc).test_client()


@pytest.mark.parametrize('method, path', [
    ('POST', '/v1/introspection/%s' % UUID),
    ('POST', '/v1/introspection/node-name'),
    ('GET', '/v1/introspection/node-name'),
])
def test_an_unreachable_ironic_is_a_503_naming_it_and_its_url(
        client, dead_ironic, method, path):
    resp = client[1].open(path, method=method)
    assert resp.status_code == 503, resp.data
    message = resp.get_json()['error']['message']
    assert message.startswith('Service temporarily unavailable: ironic '
                              'unavailable at %s: ' % dead_ironic), message
    assert 's3cret' not in message and 'admin' not in message


def test_an_unreachable_ironic_is_a_warning_per_attempt_not_a_traceback(
        client, caplog):
    caplog.set_level('WARNING')
    client[1].post('/v1/introspection/%s' % UUID)
    assert 'Traceback' not in caplog.text
    failed = [r for r in caplog.records if 'call failed' in r.getMessage()]
    assert len(failed) == 1 and 's3cret' not in caplog.text


@pytest.mark.parametrize('text, expected', [
    ('http://u:p@h:1/x and mysql+pymysql://root:pw@db/ins?x=1',
     'http://h:1/x and mysql+pymysql://db/ins?x=1'),
    ('no url here', 'no url here'),
    ('rabbit://guest:guest@a:5672,guest:guest@b:5672/',
     'rabbit://a:5672,b:5672/'),
])
def test_credentials_are_removed_from_backend_errors(text, expected):
    assert retry.without_credentials(text) == expected


def test_a_process_reads_ironics_version_at_start_not_at_its_first_call(
        service_conf, ironic_discovery):
    ironic_discovery.forget()
    with _started(service_conf) as svc:
        assert not svc.discovery.is_alive()
        at_start = ironic_discovery.discovery_calls()
        assert at_start and ironic_discovery.calls_beyond_discovery() == []
        with pytest.raises(retry.BackendUnavailable):
            svc.ironic.get_node(UUID)  # the stub answers 503
        assert ironic_discovery.discovery_calls() == at_start


def test_a_failed_read_at_start_is_logged_once_without_credentials(
        dead_ironic, service_conf, caplog):
    service_conf.set_override('retry_count', 0, group='ironic')
    with _started(service_conf):
        [line] = [r.getMessage() for r in caplog.records
                  if 'not read at start' in r.getMessage()]
        assert dead_ironic in line and 's3cret' not in caplog.text
        assert 'Traceback' not in caplog.text


def test_an_ironic_unreachable_at_start_leaves_the_process_serving(
        client, dead_ironic):
    svc, api = client
    assert not svc.discovery.is_alive() and not svc.stop.is_set()
    assert api.get('/').status_code == 200
