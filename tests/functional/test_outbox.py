"""Nothing accepted with 202 is dropped: requests an API could not
publish (its broker is unreachable) are re-driven from SQL and finish."""

import backends
import batch
import cluster as cluster_mod

NODES = 5


def test_requests_an_api_could_not_publish_are_redriven_and_finish(
        tmp_path, ironic, rabbit_url, redis_url, pg_url):
    the_cluster = cluster_mod.Cluster(
        tmp_path, pg_url, rabbit_url, redis_url, ironic.url, apis=0,
        workers=2, conf={'worker': {'redrive_after': 3,
                                    'redrive_period': 1}})
    the_cluster.start()
    dead_broker = 'rabbit://guest:guest@127.0.0.1:%d/' % backends.free_port()
    mute = the_cluster.add_api({'DEFAULT': {'transport_url': dead_broker},
                                'queue': {'retry_count': 0}})
    backends.wait_for(lambda: cluster_mod._answers(mute.url), 30)
    nodes = batch.create_nodes(ironic, NODES)
    try:
        states = batch.introspect(ironic, [mute.url], nodes, 120, pg_url)
    finally:
        codes = the_cluster.stop()
    assert {s['state'] for s in states.values()} == {'finished'}
    assert set(codes.values()) == {0}, codes
    assert 'Re-drove' in ''.join(w.log.read_text()
                                 for w in the_cluster.workers)
