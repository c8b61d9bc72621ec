"""The coordination backend gone for longer than the retry budget: the
workers stop on their own, with a non-zero exit; once it is back and the
workers are restarted, every pending introspection finishes."""

import servers
import batch
import cluster as cluster_mod

RETRIES = {'retry_count': 2, 'retry_timeout': 0.5}


def test_workers_stop_when_zookeeper_is_gone_and_finish_the_work_after(
        tmp_path, ironic, rabbit_url, pg_url):
    zookeeper = servers.ZooKeeper()
    zookeeper.start()
    try:
        _outage_and_recovery(tmp_path, ironic, rabbit_url, pg_url,
                             zookeeper)
    finally:
        zookeeper.close()


def _outage_and_recovery(tmp_path, ironic, rabbit_url, pg_url, zookeeper):
    the_cluster = cluster_mod.Cluster(
        tmp_path, pg_url, rabbit_url, zookeeper.url, ironic.url, apis=1,
        workers=2, conf={'coordination': RETRIES,
                         'worker': {'shutdown_timeout': 5}}).start()
    nodes = batch.create_nodes(ironic, 6)
    try:
        zookeeper.stop()
        batch.start_all(the_cluster.api_urls, list(nodes))
        codes = [w.wait(120) for w in the_cluster.workers]
        assert all(code != 0 for code in codes), codes
        assert all('coordination unavailable' in w.log.read_text()
                   for w in the_cluster.workers)
        zookeeper.start()
        for _ in range(2):
            the_cluster.add_worker()
        states = batch.introspect(ironic, the_cluster.api_urls, nodes, 180,
                                  pg_url, start=False)
    finally:
        the_cluster.stop()
    assert {s['state'] for s in states.values()} == {'finished'}, states
