"""A worker SIGKILLed while it holds requests: each is delivered again to
another worker and finished, and no transition is applied twice."""

import signal

import sqlalchemy as sa

import backends
import cluster as cluster_mod
import test_cluster_introspection as batch

NODES = 12


def _held_by(database, member_prefix):
    """Requests whose transition a given worker applied but not finished."""
    engine = sa.create_engine(database)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT r.id FROM requests r JOIN transitions t ON "
            "t.request_id = r.id WHERE r.status = 'applied' AND "
            "t.actor LIKE :actor"), {'actor': member_prefix + '%'}).all()
    engine.dispose()
    return {r.id for r in rows}


def _requests(database, ids):
    engine = sa.create_engine(database)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            'SELECT id, status, deliveries FROM requests')).all()
    engine.dispose()
    return {r.id: r for r in rows if r.id in ids}


def test_a_killed_workers_requests_are_redelivered_and_finished_once(
        tmp_path, ironic, rabbit_url, redis_url, pg_url):
    the_cluster = cluster_mod.Cluster(
        tmp_path, pg_url, rabbit_url, redis_url, ironic.url, apis=1,
        workers=3, conf={'worker': {'reboot_throttle': 0.3}})
    the_cluster.start()
    nodes = batch._create_nodes(ironic, NODES)
    disks = batch.ramdisk.Ramdisks(ironic.url, the_cluster.api_urls, nodes)
    disks.start()
    try:
        batch._start_all(the_cluster.api_urls, list(nodes))
        victim = the_cluster.workers[0]
        held = set()
        backends.wait_for(lambda: held.update(_held_by(
            pg_url, victim.name + '.')) or held, 60, interval=0.02,
            message='worker-0 never held a request')
        victim.send_signal(signal.SIGKILL)
        states = batch._wait_finished(the_cluster.api_urls[0], list(nodes),
                                      180, pg_url)
    finally:
        disks.stop()
        codes = the_cluster.stop()
    assert {s['state'] for s in states.values()} == {'finished'}, states
    rows = _requests(pg_url, held)
    assert all(r.status == 'done' and r.deliveries >= 2
               for r in rows.values()), rows
    batch.assert_each_strict_transition_applied_once(pg_url, set(nodes))
    assert codes['worker-0'] == -signal.SIGKILL
    assert {c for n, c in codes.items() if n != 'worker-0'} == {0}, codes
