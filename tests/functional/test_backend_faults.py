"""Backends that are down: the API answers 503 after its retries and a
worker stops with a non-zero exit instead of damaging anything."""

import time

import requests

import backends
import ironic_server
import batch
import cluster as cluster_mod
import private

RETRIES = {'retry_count': 2, 'retry_timeout': 0.2}
UNKNOWN = '0a4e5b0e-4c52-4f55-9f41-6e2d8b0f0c6a'


def _dead_url(template):
    return template % backends.free_port()


def test_an_api_whose_database_is_down_answers_503_json(tmp_path, ironic):
    the_cluster = cluster_mod.Cluster(
        tmp_path, 'sqlite:///%s/db.sqlite' % tmp_path, 'fake:/',
        'file://%s/coord' % tmp_path, ironic.url, apis=1, workers=0,
        conf={'database': RETRIES})
    the_cluster.start()
    the_cluster.base.write_text(the_cluster.base.read_text().replace(
        'sqlite:///%s/db.sqlite' % tmp_path, _dead_url(
            'postgresql+psycopg2://postgres@127.0.0.1:%d/none')))
    the_cluster.stop()
    the_cluster.apis.clear()
    api = the_cluster.add_api()
    backends.wait_for(lambda: cluster_mod._answers(api.url), 30)
    started = time.monotonic()
    resp = requests.get(api.url + '/v1/introspection/'
                        '0a4e5b0e-4c52-4f55-9f41-6e2d8b0f0c6a', timeout=30)
    assert resp.status_code == 503, resp.text
    assert 'database unavailable' in resp.json()['error']['message']
    assert time.monotonic() - started < 10
    assert set(the_cluster.stop().values()) == {0}


def test_a_worker_whose_coordination_backend_is_down_exits_non_zero(
        tmp_path, ironic):
    the_cluster = cluster_mod.Cluster(
        tmp_path, 'sqlite:///%s/db.sqlite' % tmp_path, 'fake:/',
        # NOTE: tooz's ZooKeeper driver honours its connect timeout; its
        # Redis driver retries 15 times inside each of our attempts.
        _dead_url('zookeeper://127.0.0.1:%d?timeout=2'), ironic.url,
        apis=0, workers=1,
        conf={'coordination': RETRIES})
    the_cluster.start()
    worker = the_cluster.workers[0]
    code = worker.wait(30)
    assert code != 0
    assert 'coordination unavailable' in worker.log.read_text()


def test_an_api_whose_ironic_is_stopped_answers_503_naming_ironic(
        tmp_path, obtain_backend):
    """A private Ironic is stopped under a running API (its calls then
    fail to connect) and a second API starts with it stopped (the first
    call then fails in version discovery): both answer 503."""
    ironic = obtain_backend(ironic_server.Ironic().start)
    try:
        uuid = ironic.create_node(name='stopped-ironic')
        the_cluster = cluster_mod.Cluster(
            tmp_path, 'sqlite:///%s/db.sqlite' % tmp_path, 'fake:/',
            'file://%s/coord' % tmp_path, ironic.url, apis=1, workers=0,
            conf={'ironic': RETRIES}).start()
        resp = requests.get(the_cluster.apis[0].url +
                            '/v1/introspection/stopped-ironic', timeout=30)
        assert resp.status_code == 404, resp.text  # Ironic answered
        ironic.stop()
        the_cluster.add_api()
        backends.wait_for(lambda: cluster_mod._answers(
            the_cluster.apis[1].url), 30)
        for api in the_cluster.apis:
            for path in (uuid, 'stopped-ironic'):
                resp = requests.post(api.url + '/v1/introspection/' + path,
                                     timeout=30)
                assert resp.status_code == 503, resp.text
                assert resp.json()['error']['message'].startswith(
                    'Service temporarily unavailable: ironic unavailable '
                    'at %s: ' % ironic.url)
        assert set(the_cluster.stop().values()) == {0}
        for api in the_cluster.apis:
            assert 'Traceback' not in api.log.read_text()
    finally:
        ironic.close()


def test_an_api_whose_mariadb_is_stopped_answers_503_without_credentials(
        tmp_path, ironic, obtain_backend):
    """A private MariaDB stopped under a running API: 503 naming the
    database; the user and password of its URL are in no answer."""
    server = private.MariaDB()
    try:
        obtain_backend(server.start)
        the_cluster = cluster_mod.Cluster(
            tmp_path, server.new_database(), 'fake:/',
            'file://%s/coord' % tmp_path, ironic.url, apis=1, workers=0,
            conf={'database': RETRIES}).start()
        url = the_cluster.apis[0].url + '/v1/introspection/' + UNKNOWN
        assert requests.get(url, timeout=30).status_code == 404
        server.stop()
        resp = requests.get(url, timeout=30)
        assert resp.status_code == 503, resp.text
        message = resp.json()['error']['message']
        assert 'database unavailable at mysql+pymysql://127.0.0.1:%d/' % (
            server.port) in message
        assert '%s:%s@' % (server.USER, server.USER) not in message
        assert set(the_cluster.stop().values()) == {0}
    finally:
        server.close()


def test_an_api_whose_rabbitmq_is_stopped_keeps_accepting_and_health_names_it(  # noqa: E501
        tmp_path, ironic, obtain_backend):
    """A private RabbitMQ stopped under a running API: a start is still
    202 (the request is in SQL before the answer and the outbox re-drive
    publishes it later), while ``/healthcheck`` answers 503 naming the
    broker, without its credentials, until the broker is back."""
    server = private.RabbitMQ()
    try:
        obtain_backend(server.start)
        the_cluster = cluster_mod.Cluster(
            tmp_path, 'sqlite:///%s/db.sqlite' % tmp_path, server.url,
            'file://%s/coord' % tmp_path, ironic.url, apis=1, workers=0,
            conf={'queue': RETRIES}).start()
        api_url = the_cluster.apis[0].url
        uuids = list(batch.create_nodes(ironic, 2))
        batch.start_all([api_url], uuids[:1])
        server.stop()
        text = backends.wait_for(lambda: _text_if_503(api_url), 30)
        assert 'broker unavailable' in text, text
        assert 'guest:guest@' not in text, text
        batch.start_all([api_url], uuids[1:])
        assert batch.states(api_url, uuids[1:])[uuids[1]]['state'] \
            == 'starting'
        server.start()
        backends.wait_for(lambda: getattr(_health(api_url), 'status_code',
                                          None) == 200, 60)
        assert set(the_cluster.stop().values()) == {0}
    finally:
        server.close()


def _health(api_url):
    try:
        return requests.get(api_url + '/healthcheck', timeout=10)
    except requests.RequestException:
        return None


def _text_if_503(api_url):
    resp = _health(api_url)
    return resp.text if resp is not None and resp.status_code == 503 \
        else None
