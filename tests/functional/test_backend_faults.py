"""Backends that are down: the API answers 503 after its retries and a
worker stops with a non-zero exit instead of damaging anything."""

import time

import requests

import backends
import cluster as cluster_mod

RETRIES = {'retry_count': 2, 'retry_timeout': 0.2}


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
