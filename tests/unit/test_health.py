"""/healthcheck: our backend probes behind oslo.middleware's healthcheck,
the router of a listener, and the sd_notify datagram."""

import socket
import threading
import time

from oslo_config import cfg
import pytest
import webob

from inspector_ha.api import health
from inspector_ha.common import systemd


def _failing(message):
    def check():
        raise RuntimeError(message)
    return check


def _get(app, path='/healthcheck'):
    return webob.Request.blank(path).get_response(app)


@pytest.fixture
def state(service_conf, tmp_path):
    """``[healthcheck]`` reads the global ``cfg.CONF`` (oslo.middleware)."""
    yield tmp_path
    service_conf.clear_override('backends', group='healthcheck')


def _app(probes):
    return health.Router({health.PATH: health.middleware(cfg.CONF, probes)})


def test_healthy_backends_answer_200_ok(state):
    resp = _get(_app(health.Probes([('database', lambda: None)])))
    assert resp.status_int == 200
    assert set(resp.text.split()) == {'OK'}


def test_a_backend_that_does_not_answer_is_503_naming_it(state):
    probes = health.Probes([('database', lambda: None),
                            ('broker', _failing('connection refused'))])
    resp = _get(_app(probes))
    assert resp.status_int == 503
    assert 'broker unavailable: connection refused' in resp.text
    assert 'database' not in resp.text


def test_draining_is_503_draining(state):
    probes = health.Probes([('database', lambda: None)])
    probes.draining.set()
    resp = _get(_app(probes))
    assert resp.status_int == 503
    assert 'draining' in resp.text.splitlines()


def test_the_disable_file_under_state_path_fails_the_check(state):
    app = _app(health.Probes([]))
    (state / 'healthcheck_disable').touch()
    resp = _get(app)
    assert resp.status_int == 503
    assert 'DISABLED BY FILE' in resp.text
    (state / 'healthcheck_disable').unlink()
    assert _get(app).status_int == 200


def test_probe_results_are_cached_for_their_ttl():
    calls = []
    probes = health.Probes([('database', lambda: calls.append(1))],
                           ttl=60)
    probes.failures()
    probes.failures()
    assert calls == [1]


def test_the_router_sends_other_paths_to_the_default_app():
    def default(environ, start_response):
        start_response('200 OK', [])
        return [b'api']
    router = health.Router({}, default)
    assert _get(router, '/v1').body == b'api'
    assert _get(health.Router({}), '/metrics').status_int == 404


def test_sd_notify_sends_one_datagram_to_the_notify_socket(
        tmp_path, monkeypatch):
    path = str(tmp_path / 'notify')
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        monkeypatch.setenv(systemd.ENV, path)
        assert systemd.notify('READY=1')
        assert sock.recv(100) == b'READY=1'


def test_sd_notify_without_a_notify_socket_sends_nothing(monkeypatch):
    monkeypatch.delenv(systemd.ENV, raising=False)
    assert not systemd.notify('READY=1')


def test_liveness_answers_200_while_the_main_loop_beats():
    liveness = health.Liveness(stall_after=0.2)
    stop = threading.Event()
    beating = threading.Thread(target=liveness.beat_until, args=(stop,))
    liveness.BEAT = 0.05
    beating.start()
    try:
        time.sleep(0.4)
        answer = webob.Request.blank(health.LIVE_PATH).get_response(liveness)
        assert answer.status_int == 200 and answer.text == 'alive\n'
    finally:
        stop.set()
        beating.join()


def test_liveness_is_503_once_the_main_loop_stopped_beating():
    liveness = health.Liveness(stall_after=0.1)
    time.sleep(0.2)
    answer = webob.Request.blank(health.LIVE_PATH).get_response(liveness)
    assert answer.status_int == 503
    assert answer.text.startswith('stalled: no progress for')
