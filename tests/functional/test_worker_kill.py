"""A worker SIGKILLed while it holds requests: each is delivered again to
another worker. Reentrant requests (start) run again and finish; a strict
one (process) met again sends the changes recorded with its transition
again and finishes, never processing the data twice."""

import signal


import backends
import batch
import cluster as cluster_mod
import ramdisk

NODES = 12


def _kill_when_holding(the_cluster, database, event):
    """SIGKILL worker-0 once it holds ``event`` requests; the ones it
    still held when it died (not those it finished between the look and
    the kill: the node locks it held keep the others from them until
    their lease ends)."""
    victim = the_cluster.workers[0]
    held = set()
    backends.wait_for(lambda: held.update(batch.held_by(
        database, victim.name + '.', event)) or held, 90, interval=0.01,
        message='worker-0 never held a %s request' % event)
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    died_holding = held & batch.held_by(database, victim.name + '.', event)
    assert died_holding, 'worker-0 finished %s before it died' % held
    return died_holding


def _cluster(tmp_path, ironic, rabbit_url, redis_url, pg_url, conf):
    return cluster_mod.Cluster(tmp_path, pg_url, rabbit_url, redis_url,
                               ironic.url, apis=1, workers=3,
                               conf=conf).start()


def _stop(the_cluster):
    codes = the_cluster.stop()
    assert codes['worker-0'] == -signal.SIGKILL
    assert {c for n, c in codes.items() if n != 'worker-0'} == {0}, codes


def test_a_killed_workers_start_requests_are_redelivered_and_finish(
        tmp_path, ironic, rabbit_url, redis_url, pg_url):
    the_cluster = _cluster(tmp_path, ironic, rabbit_url, redis_url, pg_url,
                           {'worker': {'reboot_throttle': 0.3}})
    nodes = batch.create_nodes(ironic, NODES)
    try:
        batch.start_all(the_cluster.api_urls, list(nodes))
        held = _kill_when_holding(the_cluster, pg_url, 'start')
        states = batch.introspect(ironic, the_cluster.api_urls, nodes, 180,
                                  pg_url, start=False)
    finally:
        _stop(the_cluster)
    assert {s['state'] for s in states.values()} == {'finished'}, states
    rows = batch.requests_by_id(pg_url, held)
    assert all(r.status == 'done' and r.deliveries >= 2
               for r in rows.values()), rows
    batch.assert_each_strict_transition_applied_once(pg_url, set(nodes))


def test_a_killed_workers_process_requests_are_resumed_and_finish(
        tmp_path, ironic, rabbit_url, redis_url, pg_url):
    # NOTE: a slow Ironic would make processing long; instead many nodes
    # are processed at once, so worker-0 is soon caught mid-processing.
    the_cluster = _cluster(tmp_path, ironic, rabbit_url, redis_url, pg_url,
                           {})
    nodes = batch.create_nodes(ironic, 40)
    disks = ramdisk.Ramdisks(ironic.url, the_cluster.api_urls, nodes)
    try:
        disks.start()
        batch.start_all(the_cluster.api_urls, list(nodes))
        held = _kill_when_holding(the_cluster, pg_url, 'process')
        states = batch.wait_finished(the_cluster.api_urls[0], list(nodes),
                                     180, pg_url)
    finally:
        disks.stop()
        _stop(the_cluster)
    rows = batch.requests_by_id(pg_url, held).values()
    # A request redelivered after the kill (deliveries > 1) met its strict
    # transition again; one that completed in the instant before the
    # signal landed (deliveries == 1) finished normally.
    assert any(r.deliveries > 1 for r in rows), \
        'the kill caught no process request in flight'
    assert {s['state'] for s in states.values()} == {'finished'}, states
    assert all(s['error'] is None for s in states.values())
    batch.assert_each_strict_transition_applied_once(pg_url, set(nodes))
    batch.assert_ironic_was_updated(ironic, nodes)
