"""Operating a split cluster: Prometheus metrics scraped from every
process during a batch add up to the batch, every series the shipped
alerts and dashboard name is among them, and the request id an API call
answered is on the worker log lines about that node."""

import re
import subprocess
import threading

from prometheus_client.parser import text_string_to_metric_families
import pytest
import requests

import backends
import batch
import cluster as cluster_mod
import monitoring

NODES = 8
GLOBAL = 'req-1b3a7b4e-9f6f-4d8e-8d2c-3e5f7a9b1c2d'


def scrape(url):
    """``{(name, labels as a sorted tuple): value}`` of one /metrics."""
    resp = requests.get(url + '/metrics', timeout=10)
    assert resp.status_code == 200, resp.text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(resp.text)
            for s in family.samples}


def total(scrapes, name, **labels):
    """The sum over processes of the samples of ``name`` with ``labels``."""
    wanted = set(labels.items())
    return sum(value for one in scrapes for (n, lbl), value in one.items()
               if n == name and wanted <= set(lbl))


class Scraper(threading.Thread):
    """Scrapes every target until stopped; keeps each round."""

    def __init__(self, urls):
        super().__init__(daemon=True)
        self.urls, self.rounds, self.done = urls, [], threading.Event()

    def run(self):
        while not self.done.wait(0.5):
            self.rounds.append([scrape(u) for u in self.urls])


@pytest.fixture
def observed_cluster(tmp_path, ironic, rabbit_url, pg_url, redis_url):
    the_cluster = cluster_mod.Cluster(tmp_path, pg_url, rabbit_url,
                                      redis_url, ironic.url, apis=2,
                                      workers=0).start()
    for _ in range(2):
        port = backends.free_port()
        worker = the_cluster.add_worker({'metrics': {'port': port}})
        worker.url = 'http://127.0.0.1:%d' % port
        backends.wait_for(lambda: _answers(worker.url), 30,
                          message='worker metrics did not answer')
    yield the_cluster
    codes = the_cluster.stop()
    assert set(codes.values()) == {0}, (codes, the_cluster.logs(20))


def _answers(url):
    try:
        return requests.get(url + '/metrics', timeout=1).ok
    except requests.RequestException:
        return False


def _start(the_cluster, uuids):
    """Start every node; {uuid: the request id its API answered}."""
    ids = {}
    for i, uuid in enumerate(uuids):
        resp = requests.post('%s/v1/introspection/%s' % (
            the_cluster.api_urls[i % 2], uuid), timeout=30,
            headers={'X-OpenStack-Request-ID': GLOBAL})
        assert resp.status_code == 202, resp.text
        ids[uuid] = resp.headers['X-OpenStack-Request-ID']
    return ids


def test_metrics_of_a_split_cluster_add_up_to_the_batch_and_ids_follow(
        observed_cluster, ironic):
    the_cluster = observed_cluster
    targets = [p.url for p in the_cluster.apis + the_cluster.workers]
    nodes = batch.create_nodes(ironic, NODES)
    scraper = Scraper(targets)
    scraper.start()
    try:
        ids = _start(the_cluster, list(nodes))
        states = batch.introspect(ironic, the_cluster.api_urls, nodes, 180,
                                  the_cluster.database, start=False)
    finally:
        scraper.done.set()
        scraper.join()
    assert {s['state'] for s in states.values()} == {'finished'}
    final = [scrape(u) for u in targets]
    assert total(final, 'inspector_ha_introspections_started_total',
                 kind='start') == NODES
    assert total(final, 'inspector_ha_introspections_ended_total',
                 outcome='finished') == NODES
    assert total(final, 'inspector_ha_introspection_duration_seconds_count',
                 outcome='finished') == NODES
    assert total(final, 'inspector_ha_api_requests_total',
                 route='/v1/introspection/<node_id>', method='POST',
                 status='202') == NODES
    assert total(final, 'inspector_ha_transitions_total',
                 result='committed') >= 4 * NODES
    assert total(final, 'inspector_ha_request_queue_lag_seconds_count',
                 event='start') == NODES
    for state in ('starting', 'waiting', 'processing'):
        assert total(final, 'inspector_ha_state_seconds_count',
                     state=state) == NODES, state
    assert total(final, 'inspector_ha_ironic_calls_total', result='ok') > 0
    assert total(final, 'inspector_ha_dead_letters_total') == 0
    # NOTE: during the batch, counters only grow and the ends never
    # exceed the starts.
    ends = [total(r, 'inspector_ha_introspections_ended_total')
            for r in scraper.rounds]
    assert ends == sorted(ends) and len(ends) >= 2, ends
    for one_round in scraper.rounds:
        assert total(one_round, 'inspector_ha_introspections_ended_total') \
            <= total(one_round, 'inspector_ha_introspections_started_total')
    _assert_request_ids_in_worker_logs(the_cluster, ids)
    _assert_the_watch_view_shows_the_batch(the_cluster)
    _assert_the_alerts_and_dashboard_name_exported_series(targets)


def _assert_the_alerts_and_dashboard_name_exported_series(targets):
    exported = set().union(*(monitoring.exported(requests.get(
        url + '/metrics', timeout=10).text) for url in targets))
    assert monitoring.named_series() - exported == set()


def _assert_the_watch_view_shows_the_batch(the_cluster):
    out = subprocess.run(
        [cluster_mod.BIN / 'inspector-ha-status', '--config-file',
         the_cluster.base, '--watch', '--interval', '0.2', '--iterations',
         '2'], check=True, capture_output=True, text=True,
        timeout=60).stdout
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert 'finished %d | in flight 0 |' % NODES in lines[-1], out
    assert 'members 4' in lines[-1], out


def _assert_request_ids_in_worker_logs(the_cluster, ids):
    logs = '\n'.join(w.log.read_text() for w in the_cluster.workers)
    for uuid, request_id in ids.items():
        lines = [line for line in logs.splitlines()
                 if '[%s %s ' % (GLOBAL, request_id) in line]
        assert any('[node %s]' % uuid in line and 'TRANSITION' in line
                   for line in lines), (uuid, request_id, logs[-3000:])
    assert not re.search(r'^Traceback', logs, re.M)
