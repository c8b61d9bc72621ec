"""How an API process serves (cheroot): /healthcheck of its real
backends, READY=1 to systemd, the graceful drain on SIGTERM, SIGHUP,
TLS, and the one-line errors of a bad start."""

import signal
import socket
import subprocess
import sys

import pytest

import backends
import servers
import cluster as cluster_mod
import private
import serving

DRAIN = 3.0


@pytest.fixture(scope='module')
def the_cluster(tmp_path_factory, ironic, obtain_backend):
    """A base configuration on PostgreSQL, RabbitMQ and Redis; each test
    adds the processes it needs."""
    pg = obtain_backend(backends.postgres_url)
    rabbit = obtain_backend(backends.rabbit_url)
    redis = obtain_backend(backends.redis_url)
    the = cluster_mod.Cluster(tmp_path_factory.mktemp('serving'), pg, rabbit,
                              redis, ironic.url, apis=0, workers=0).start()
    try:
        yield the
    finally:
        the.stop()
    backends.drop_database(pg)
    backends.delete_vhost(rabbit)
    backends.flush_redis_namespace(redis)


def _started(the_cluster, conf=None, env=None):
    api = the_cluster.add_api(conf, env)
    backends.wait_for(lambda: serving.get(api.url + '/'), 60,
                      message=the_cluster.logs())
    return api


def test_an_api_tells_systemd_it_is_ready_once_its_backends_answer(
        the_cluster, tmp_path):
    notify = serving.NotifySocket(tmp_path / 'notify')
    try:
        api = the_cluster.add_api(env={'NOTIFY_SOCKET': notify.path})
        assert notify.receive(60) == 'READY=1'
        health = serving.get(api.url + '/healthcheck')
        assert health.status_code == 200, health.text
        api.send_signal(signal.SIGTERM)
        assert notify.receive(30) == 'STOPPING=1'
        assert api.wait(30) == 0
    finally:
        notify.close()


def test_sigterm_fails_the_health_check_first_then_finishes_the_request_in_flight_and_exits_0(  # noqa: E501
        the_cluster):
    api = _started(the_cluster, {'api': {'drain_time': DRAIN}})
    held = serving.HeldRequest(api.url).open()
    api.send_signal(signal.SIGTERM)
    health = backends.wait_for(
        lambda: _text_if_503(api.url + '/healthcheck'), 10)
    assert 'draining' in health
    assert serving.get(api.url + '/').status_code == 200
    backends.wait_for(lambda: serving.get(api.url + '/') is None,
                      DRAIN + 30, message='the listener never closed')
    assert api.poll() is None, 'exited with a request in flight'
    assert held.finish().startswith('HTTP/1.1 4')
    assert api.wait(30) == 0


def test_sighup_rereads_the_log_level_and_the_api_keeps_serving(
        the_cluster):
    api = _started(the_cluster)
    api.conf.write_text(api.conf.read_text() + '\ndebug = true\n')
    api.send_signal(signal.SIGHUP)
    backends.wait_for(lambda: 'Log level: DEBUG' in api.log.read_text(),
                      20, message=the_cluster.logs())
    assert api.poll() is None
    assert serving.get(api.url + '/').status_code == 200
    api.send_signal(signal.SIGTERM)
    assert api.wait(30) == 0


def test_the_api_serves_tls_with_the_configured_certificate(
        the_cluster, tmp_path):
    cert, key = serving.self_signed(tmp_path)
    api = the_cluster.add_api({'DEFAULT': {'use_ssl': 'true'},
                               'ssl': {'cert_file': cert, 'key_file': key}})
    url = api.url.replace('http:', 'https:')
    resp = backends.wait_for(lambda: serving.get(url + '/', verify=cert),
                             60, message=the_cluster.logs())
    assert resp.json()['versions'][0]['id'] == '1.18'
    api.send_signal(signal.SIGTERM)
    assert api.wait(30) == 0


@pytest.mark.parametrize('conf, message', [
    ({'DEFAULT': {'use_ssl': 'true'},
      'ssl': {'cert_file': '/nonexistent/api.pem', 'key_file': '/x'}},
     '[ssl] cert_file /nonexistent/api.pem is missing or unreadable'),
    ({'api': {'threads': 'lots'}},
     "[api] threads: invalid literal for int() with base 10: 'lots'"),
    ({'DEFAULT': {'auth_strategy': 'kerberos'}},
     "[DEFAULT] auth_strategy: Valid values are"),
    ({'DEFAULT': {'listen_port': 'IN_USE'}}, 'Address already in use'),
])
def test_a_bad_start_is_one_line_and_exit_2_before_anything_starts(
        the_cluster, conf, message):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        if conf.get('DEFAULT', {}).get('listen_port') == 'IN_USE':
            conf = {'DEFAULT': {'listen_port': taken.getsockname()[1]}}
        own = the_cluster._write('bad.conf', conf)
        result = subprocess.run(
            [cluster_mod.BIN / 'inspector-ha-api', '--config-file',
             the_cluster.base, '--config-file', own],
            capture_output=True, text=True, timeout=120)
    errors = [line for line in result.stderr.splitlines()
              if line.startswith('inspector-ha-api: error: ')]
    assert result.returncode == 2, result.stderr
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert 'Traceback' not in result.stderr
    assert 'listening' not in result.stdout


def test_a_worker_health_listener_names_the_coordination_backend_that_is_gone(  # noqa: E501
        tmp_path, ironic):
    redis = private.Redis().start()
    port = backends.free_port()
    conf = tmp_path / 'worker.conf'
    conf.write_text(
        '[DEFAULT]\ntransport_url = fake:/\nstate_path = %s\n'
        '[database]\nconnection = sqlite:///%s/db.sqlite\n'
        '[coordination]\nbackend_url = %s\n'
        '[ironic]\nauth_type = none\nendpoint_override = %s\n'
        '[worker]\nhealth_port = %d\nhealth_address = 127.0.0.1\n' % (
            tmp_path, tmp_path, redis.url, ironic.url, port))
    subprocess.run([cluster_mod.BIN / 'inspector-ha-dbsync', '--config-file',
                    conf, 'upgrade'], check=True, capture_output=True)
    log = open(tmp_path / 'worker.log', 'wb')
    worker = subprocess.Popen([sys.executable, cluster_mod.BIN /
                               'inspector-ha-worker', '--config-file', conf],
                              stdout=log, stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d/healthcheck' % port
    try:
        backends.wait_for(lambda: _status(url) == 200, 60,
                          message=servers.log_tail(tmp_path / 'worker.log'))
        redis.kill()
        text = backends.wait_for(lambda: _text_if_503(url), 30)
        assert 'coordination unavailable' in text
        assert serving.get(url.replace('healthcheck', 'v1')).status_code \
            == 404
    finally:
        # NOTE: not SIGTERM: its shutdown waits on tooz's Redis driver,
        # about 80 s with Redis gone (P2b), which is not this test's.
        worker.kill()
        worker.wait(30)
        redis.close()


def _text_if_503(url):
    resp = serving.get(url)
    return resp.text if resp is not None and resp.status_code == 503 \
        else None


def _status(url):
    resp = serving.get(url)
    return resp.status_code if resp is not None else None
