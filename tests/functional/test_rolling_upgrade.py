"""A rolling upgrade from the previous release with introspections in
flight: 2 APIs behind the shipped HAProxy file and 3 workers of the
previous release (built from git, unmodified) on RabbitMQ quorum queues,
Redis and PostgreSQL, with a real Ironic. Expand; one worker upgraded
(pinned) and rolled back to the previous release while the batch runs;
replace the hosts one at a time, a host's worker then its API (both
releases take requests from the same queue for over 60 s, and new APIs
publish while old workers consume); unpin; online data migrations;
contract. Starts and ramdisk posts keep coming throughout; every
introspection finishes, none stuck or dead-lettered, the fault suite's
history checker finds no transition applied twice, and no process of the
previous release met a message it could not read."""

import os
import threading
import time

import pytest
import sqlalchemy as sa

from inspector_ha.coordination import releases

import backends
import haproxy as haproxy_mod
import previous
import ramdisk
import upgrade_cluster

import harness as harness_mod  # noqa: I100 (tests/fault, put on the path)
import history as history_mod

MIXED_SECONDS = 60
OLD_RELEASE = previous.release()[0]
PINNED = {'DEFAULT': {'pin_release_version': OLD_RELEASE}}
CONF = {
    'DEFAULT': {'clean_up_period': 5},
    'worker': {'pool_size': 2, 'redrive_after': 5, 'redrive_period': 1,
               'max_deliveries': 10},
    'oslo_messaging_rabbit': {'rabbit_quorum_queue': 'true'},
}


class _Run:
    """What :mod:`history` reads from a run: nodes, SQL, processes,
    Ironic."""

    def __init__(self, database, cluster, ironic, nodes):
        self.cluster = cluster
        self.ironic = ironic
        self.nodes = nodes
        self._engine = sa.create_engine(database)

    def query(self, sql, **params):
        with self._engine.connect() as conn:
            return conn.execute(sa.text(sql), params).all()

    def stop(self):
        codes = self.cluster.stop()
        self._engine.dispose()
        return codes


class _Stream(threading.Thread):
    """Starts one node every ``pace`` seconds until stopped or out of
    nodes."""

    def __init__(self, driver, uuids, pace=5.0):
        super().__init__(daemon=True, name='stream')
        self._driver = driver
        self._uuids = list(uuids)
        self._pace = pace
        self.stopping = threading.Event()

    def run(self):
        while self._uuids and not self.stopping.wait(self._pace):
            self._driver.start_all([self._uuids.pop(0)], pace=0)


def _states(run, uuids):
    return {r.uuid: r.state for r in run.query(
        'SELECT uuid, state FROM nodes') if r.uuid in uuids}


#: The coordination backends the test rolls on: Redis in CI; the long
#: form (``INSPECTOR_HA_ROLLING_COORDINATION=redis,zookeeper,etcd``)
#: each of the suite's backends.
COORDINATION = os.environ.get('INSPECTOR_HA_ROLLING_COORDINATION',
                              'redis').split(',')


def _coordination_url(request, name):
    if name == 'zookeeper':
        return request.getfixturevalue('zookeeper').url
    return request.getfixturevalue({'redis': 'redis_url',
                                    'etcd': 'etcd_url'}[name])


#: What a member logs for a message it cannot read: one the new release
#: published above what the old one reads is a broken wire.
WIRE_COMPLAINTS = ('Putting back a message of a newer release',
                   'Dropping a message this worker cannot decode')


def _wire_complaints(cluster):
    """Lines of the previous release's processes about messages they
    could not read."""
    return [line for proc in cluster.workers + cluster.apis
            if '-old' in proc.name
            for line in proc.log.read_text(errors='replace').splitlines()
            if any(words in line for words in WIRE_COMPLAINTS)]


def _roll_one_worker_back(run, old_bin):
    """Upgrade one worker, pinned as doc/upgrade.md says, wait until it
    has committed a transition, then roll it back to the previous
    release."""
    cluster = run.cluster
    cluster.bindir = upgrade_cluster.NEW
    upgraded = cluster.replace(cluster.live(cluster.workers)[0], PINNED)
    backends.wait_for(lambda: run.query(
        'SELECT 1 FROM transitions WHERE actor LIKE :name',
        name=upgraded.name + '%'), 90, interval=0.5,
        message='the upgraded worker committed no transition')
    cluster.bindir = old_bin
    cluster.replace(upgraded, {})


@pytest.mark.parametrize('coordination', COORDINATION)
def test_a_rolling_upgrade_with_introspections_in_flight_fails_none(
        request, tmp_path, pg_url, rabbit_url, ironic, coordination):
    coordination_url = _coordination_url(request, coordination)
    old_bin = previous.build()
    nodes = harness_mod.batch.create_nodes(ironic, 30)
    uuids = list(nodes)
    before, held, streamed, after = (uuids[:8], uuids[8:12], uuids[12:26],
                                     uuids[26:])
    cluster = upgrade_cluster.MixedCluster(
        tmp_path, pg_url, rabbit_url, coordination_url, ironic.url, apis=2,
        workers=3, conf=CONF, bindir=old_bin)
    run = _Run(pg_url, cluster, ironic, nodes)
    proxy = None
    disks = []
    try:
        cluster.dbsync('upgrade')
        for _ in range(3):
            upgrade_cluster.wait_started(cluster.add_worker())
        for _ in range(2):
            upgrade_cluster.wait_started(cluster.add_api())
        proxy = haproxy_mod.HAProxy(cluster.api_urls).start()
        driver = harness_mod.Driver(proxy.url)

        def play(uuids_):
            disks.append(ramdisk.Ramdisks(ironic.url, [proxy.url], {
                u: nodes[u] for u in uuids_}).start())

        # A batch in flight on the previous release; ``held`` nodes wait
        # for a ramdisk that posts only once the workers are mixed.
        play(before)
        driver.start_all(before + held)
        backends.wait_for(lambda: 'waiting' in _states(
            run, held).values(), 60, message='no node reached waiting')
        cluster.dbsync('upgrade', '--expand', bindir=upgrade_cluster.NEW)

        stream = _Stream(driver, streamed)
        play(streamed)
        stream.start()
        _roll_one_worker_back(run, old_bin)
        cluster.bindir = upgrade_cluster.NEW
        mixed_since = time.monotonic()
        # Host by host: a host's worker, then its API (3 hosts, the third
        # runs no API), so new APIs publish while old workers consume.
        apis = cluster.live(cluster.apis)
        for index, old in enumerate(cluster.live(cluster.workers)):
            if index:
                # NOTE: pacing, not an assertion: both releases consume
                # the same queue for MIXED_SECONDS before the last goes.
                time.sleep(max(0.0, mixed_since + MIXED_SECONDS * index / 2
                               - time.monotonic()))
            cluster.replace(old, PINNED)
            if index < len(apis):
                cluster.replace(apis[index], PINNED)
            if index == 1:
                play(held)
                code, checks = cluster.upgrade_check()
                assert code == 1 and checks['Member versions'][0] == 1
                assert OLD_RELEASE in checks['Member versions'][1]
                assert releases.CURRENT in checks['Member versions'][1]
        # Unpin: every member restarts without the pin, one at a time.
        for proc in cluster.live(cluster.workers) + cluster.live(
                cluster.apis):
            cluster.replace(proc, {})
        stream.stopping.set()
        stream.join(60)
        play(after)
        driver.start_all(after)
        cluster.dbsync('online_data_migrations')
        cluster.dbsync('upgrade', '--contract')
        code, checks = cluster.upgrade_check()
        assert code == 0, checks

        accepted = set(driver.accepted)
        assert accepted == set(uuids) - set(stream._uuids), driver.refused
        backends.wait_for(lambda: all(
            s in ('finished', 'error') for s in _states(
                run, accepted).values()), 240, interval=1.0,
            message='not all over: %s' % (lambda: _states(run, accepted)))
        states = _states(run, accepted)
        assert set(states.values()) == {'finished'}, states
        # Both releases committed transitions of requests from the same
        # queue at the same time: a new worker before an old one's last.
        commits = run.query('SELECT actor, at FROM transitions')
        old = [r.at for r in commits if '-old' in r.actor]
        new = [r.at for r in commits if '-new' in r.actor]
        assert old and new and min(new) < max(old)
        record = history_mod.record(run, driver)
        for disk in disks:
            disk.stop()
        disks = []
        record.exits = run.stop()
        history_mod.read_logs(record, run)
        assert not [r for r in record.ledger if r.status == 'dead']
        assert history_mod.check(record) == []
        assert _wire_complaints(cluster) == []
    finally:
        for disk in disks:
            disk.stop()
        cluster.stop()
        if proxy is not None:
            proxy.stop()
        for uuid in uuids:
            ironic.request('DELETE', '/v1/nodes/%s' % uuid,
                           expect=(204, 404, 409))
