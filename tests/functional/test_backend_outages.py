"""A backend gone for longer than the retry budget (issue 4): RabbitMQ,
the database (MariaDB) and Redis, each a private server of the test's own.

While introspections are pending the backend is stopped: every worker
stops on its own, exits non-zero within a bound, names the backend in its
log and does not hang or spam tracebacks. Once the backend is back (same
port, same data) and new workers are started, every pending introspection
finishes.
"""

import time

import pytest

import backends
import batch
import cluster as cluster_mod
import private

NODES = 6
RETRIES = {'retry_count': 2, 'retry_timeout': 0.5}
CONF = {'queue': RETRIES, 'database': RETRIES, 'coordination': RETRIES,
        'worker': {'shutdown_timeout': 5, 'watch_period': 0.5,
                   'redrive_after': 5, 'redrive_period': 1}}
#: Longest time from the outage to the last worker's exit: the budget
#: (3 attempts 0.5 s apart, each bounded) plus shutdown_timeout, with
#: room for a loaded 2-core machine.
EXIT_BOUND = 40
MAX_TRACEBACKS = 3


def _cluster(tmp_path, ironic, database, transport, coordination):
    return cluster_mod.Cluster(tmp_path, database, transport, coordination,
                               ironic.url, apis=1, workers=2,
                               conf=CONF).start()


def _workers_stop_on_their_own(the_cluster, backend_name):
    started = time.monotonic()
    codes = [w.wait(EXIT_BOUND + 60) for w in the_cluster.workers]
    took = time.monotonic() - started
    print('%s gone: every worker exited within %.1f s' % (backend_name,
                                                           took))
    assert all(code not in (0, None) for code in codes), codes
    assert took < EXIT_BOUND, took
    for worker in the_cluster.workers:
        log = worker.log.read_text()
        assert '%s unavailable' % backend_name in log, log[-3000:]
        assert log.count('Traceback') <= MAX_TRACEBACKS, log[-5000:]


def _recover(the_cluster, server, ironic, nodes):
    server.start()
    _power_off_the_starting(ironic, the_cluster.api_urls[0], list(nodes))
    for _ in range(2):
        the_cluster.add_worker()
    states = batch.introspect(ironic, the_cluster.api_urls, nodes, 180,
                              the_cluster.database, start=False)
    assert {s['state'] for s in states.values()} == {'finished'}, states
    batch.assert_each_strict_transition_applied_once(the_cluster.database,
                                                     set(nodes))


def _power_off_the_starting(ironic, api_url, uuids):
    """Nodes powered on by a worker that then stopped before recording
    their MACs: their start requests are redelivered and reboot them
    again, and the simulated ramdisk must answer that reboot, not the
    first one (it would find no lookup attributes yet: 400)."""
    states = batch.states(api_url, uuids)
    for uuid in [u for u, s in states.items() if s['state'] == 'starting']:
        ironic.request('PUT', '/v1/nodes/%s/states/power' % uuid,
                       expect=(202,), json={'target': 'power off'})
        backends.wait_for(lambda: ironic.power_state(uuid) == 'power off',
                          30)


def _stop(the_cluster):
    codes = the_cluster.stop()
    alive = {n: c for n, c in codes.items()
             if n == 'api-0' or int(n.split('-')[1]) >= 2}
    assert set(alive.values()) == {0}, codes


def _stop_mid_batch(the_cluster, server, ironic, backend):
    """Start half the nodes, stop ``server``, start the rest: every
    worker stops on its own; after a restart everything finishes."""
    nodes = batch.create_nodes(ironic, NODES)
    uuids = list(nodes)
    try:
        batch.start_all(the_cluster.api_urls, uuids[:NODES // 2])
        server.stop()
        batch.start_all(the_cluster.api_urls, uuids[NODES // 2:])
        _workers_stop_on_their_own(the_cluster, backend)
        _recover(the_cluster, server, ironic, nodes)
    finally:
        _stop(the_cluster)


@pytest.mark.parametrize('private_server', [private.RabbitMQ],
                         indirect=True)
def test_workers_stop_when_rabbitmq_is_gone_and_finish_the_work_after(
        tmp_path, ironic, pg_url, redis_url, private_server):
    the_cluster = _cluster(tmp_path, ironic, pg_url, private_server.url,
                           redis_url)
    _stop_mid_batch(the_cluster, private_server, ironic, 'queue')


@pytest.mark.parametrize('private_server', [private.MariaDB],
                         indirect=True)
def test_workers_stop_when_the_database_is_gone_and_finish_the_work_after(
        tmp_path, ironic, rabbit_url, redis_url, private_server):
    database = private_server.new_database()
    the_cluster = _cluster(tmp_path, ironic, database, rabbit_url,
                           redis_url)
    nodes = batch.create_nodes(ironic, NODES)
    try:
        batch.start_all(the_cluster.api_urls, list(nodes))
        private_server.stop()
        _workers_stop_on_their_own(the_cluster, 'database')
        _recover(the_cluster, private_server, ironic, nodes)
    finally:
        _stop(the_cluster)


@pytest.mark.parametrize('private_server', [private.Redis], indirect=True)
def test_workers_stop_when_redis_is_gone_and_finish_the_work_after(
        tmp_path, ironic, rabbit_url, pg_url, private_server):
    the_cluster = _cluster(tmp_path, ironic, pg_url, rabbit_url,
                           private_server.url)
    _stop_mid_batch(the_cluster, private_server, ironic, 'coordination')
