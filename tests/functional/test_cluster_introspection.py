"""Introspection end to end on a split cluster: 2 API processes, 3
workers, a real broker, coordination backend, database and Ironic.

On MariaDB and ZooKeeper the workers share ``[worker]
cluster_concurrency = 6`` (4 threads each): each starts alone with its
whole share, then takes 2 as the others join, over RabbitMQ
(doc/guarantees.md I1).

The suite runs a batch of 60 nodes per backend pair; the long form is
``CLUSTER_BATCH_NODES=200 bash tools/run-tests.sh
tests/functional/test_cluster_introspection.py``.
"""

import os

import pytest

import backends
import batch
import cluster as cluster_mod

NODES = int(os.environ.get('CLUSTER_BATCH_NODES', '60'))


@pytest.fixture
def split_cluster(request, tmp_path, ironic, rabbit_url):
    database, coordination = request.getfixturevalue(request.param[0]), \
        request.param[1](request)
    conf = None
    if request.param[0] == 'mariadb_url':
        conf = {'worker': {'cluster_concurrency': 6}}
    the_cluster = cluster_mod.Cluster(tmp_path, database, rabbit_url,
                                      coordination, ironic.url, conf=conf)
    the_cluster.start()
    yield the_cluster
    codes = the_cluster.stop()
    print(the_cluster.logs(20))
    assert set(codes.values()) == {0}, codes


def _redis(request):
    return request.getfixturevalue('redis_url')


def _zookeeper(request):
    return request.getfixturevalue('zookeeper').url


@pytest.mark.parametrize('split_cluster', [
    ('pg_url', _redis), ('mariadb_url', _zookeeper)],
    ids=['postgresql-redis', 'mariadb-zookeeper'], indirect=True)
def test_a_batch_of_nodes_goes_from_start_to_finished_on_a_split_cluster(
        ironic, split_cluster):
    if 'cluster_concurrency' in split_cluster.base.read_text():
        backends.wait_for(lambda: _slots(split_cluster) == [2, 2, 2], 30)
    nodes, states = batch.run_batch(ironic, split_cluster, NODES, timeout=300)
    errors = {u: s['error'] for u, s in states.items()
              if s['state'] != 'finished'}
    assert not errors, errors
    batch.assert_ironic_was_updated(ironic, list(nodes)[:20])
    batch.assert_each_strict_transition_applied_once(split_cluster.database,
                                                     set(nodes))


def _slots(the_cluster):
    """Each worker's share of ``cluster_concurrency``, as shown."""
    return sorted(caps.get('slots') for caps in
                  the_cluster.status()['members'].values()
                  if 'worker' in caps['roles'])
