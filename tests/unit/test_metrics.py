"""``/metrics`` of an API process: served without credentials, counted
by route, and gone when ``[metrics] enabled`` is false."""

import re

from prometheus_client.parser import text_string_to_metric_families
from inspector_ha.api import app as app_mod
from inspector_ha.common import metrics
from inspector_ha.fsm import states as st


def _samples(resp):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(resp.get_data(True))
            for s in f.samples}


def test_the_api_serves_its_metrics_with_prometheus_names(service,
                                                          put_node):
    client = app_mod.create_app(service).test_client()
    uuid = put_node(st.ERROR)
    client.get('/v1/introspection/' + uuid)
    resp = client.get('/metrics')
    assert resp.status_code == 200
    assert resp.mimetype == 'text/plain'
    samples = _samples(resp)
    key = ('inspector_ha_api_requests_total', (
        ('method', 'GET'), ('route', '/v1/introspection/<node_id>'),
        ('status', '200')))
    assert samples[key] >= 1
    names = {name for name, _labels in samples}
    for name in metrics.prom.REGISTRY._names_to_collectors:
        if name.startswith(metrics.PREFIX) and not name.endswith(
                ('_created', '_bucket', '_sum', '_count')):
            assert re.match(r'^inspector_ha_[a-z_]+$', name), name
    assert 'inspector_ha_api_request_seconds_count' in names


def test_unknown_methods_are_counted_as_one_series(service):
    client = app_mod.create_app(service).test_client()
    for method in ('M1', 'M2', 'BREW'):
        assert client.open('/v1/nothing', method=method).status_code == 404
    samples = _samples(client.get('/metrics'))
    methods = {dict(labels)['method'] for name, labels in samples
               if name == 'inspector_ha_api_requests_total'}
    assert 'other' in methods
    assert not methods & {'M1', 'M2', 'BREW'}
    assert methods <= app_mod.COUNTED_METHODS | {'other'}


def test_metrics_need_no_credential_with_authentication_on(service,
                                                           service_conf):
    service_conf.set_override('auth_strategy', 'http_basic')
    service_conf.set_override('http_basic_auth_user_file', '/dev/null')
    client = app_mod.create_app(service).test_client()
    assert client.get('/v1/rules').status_code == 401
    assert client.get('/metrics').status_code == 200


def test_metrics_can_be_turned_off(service, service_conf):
    service_conf.set_override('enabled', False, group='metrics')
    client = app_mod.create_app(service).test_client()
    assert client.get('/metrics').status_code == 404


def test_a_worker_metrics_port_in_use_is_one_line_and_no_start(
        service_conf, caplog):
    import socket
    from inspector_ha.cmd import common
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        sock.listen()
        service_conf.set_override('port', sock.getsockname()[1],
                                  group='metrics')
        service_conf.set_override('listen_address', '127.0.0.1')
        assert common.serve_metrics(service_conf) is False
    assert 'Cannot serve metrics on port' in caplog.text


def test_a_series_is_the_one_labels_gives_and_counts_in_its_metric():
    counter = metrics.TRANSITIONS
    series = metrics.series(counter, st.START, 'unit-test')
    assert series is counter.labels(st.START, 'unit-test')
    assert metrics.series(counter, st.START, 'unit-test') is series
    before = series._value.get()
    metrics.series(counter, st.START, 'unit-test').inc()
    assert counter.labels(st.START, 'unit-test')._value.get() == before + 1
