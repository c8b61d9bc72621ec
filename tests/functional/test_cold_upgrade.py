"""Cold upgrades from the previous release (built from git).

The split deployment in grenade's order, by the grenade plugin's own
scripts (``devstack/upgrade/``) against real services: ``resources.sh
create`` on the previous release (started by its own devstack plugin),
``shutdown.sh``, ``resources.sh verify_noapi``, ``upgrade.sh``,
``resources.sh verify`` (twice: it is safe to repeat), ``destroy``. On
PostgreSQL and on MariaDB.

The all-in-one ``inspector-ha`` as an operator upgrades it: stopped with
nodes finished and nodes waiting for their ramdisk, the new release
started on the same state (it migrates at start); the waiting nodes
finish and the finished ones keep their data. On the embedded default's
SQLite file, on PostgreSQL and on MariaDB."""

import signal

import pytest
import requests

from inspector_ha.db import migration

import backends
import batch
import embedded
import grenade_env
import previous


@pytest.mark.parametrize('database', ['pg_url', 'mariadb_url'])
def test_a_cold_upgrade_in_grenades_order_keeps_every_resource(
        request, tmp_path, database, rabbit_url, redis_url, ironic):
    url = request.getfixturevalue(database)
    base_bin = previous.build()
    grenade = grenade_env.Grenade(
        tmp_path, base_bin, base_bin.parents[1] / 'src' / 'devstack', url,
        rabbit_url, redis_url, ironic.url)
    try:
        grenade.start_base()
        grenade.phase('resources.sh', 'create', base=True)
        grenade.phase('shutdown.sh', base=True)
        grenade.phase('resources.sh', 'verify_noapi', base=True)
        assert migration.current(url) == migration.head(
            base_bin.parents[1] / 'src' / 'migrations')
        grenade.phase('upgrade.sh')
        assert migration.at_head(url)
        grenade.phase('resources.sh', 'verify')
        grenade.phase('resources.sh', 'verify')
        grenade.phase('resources.sh', 'destroy')
        grenade.phase('shutdown.sh')
    finally:
        grenade.kill_all()


@pytest.mark.parametrize('database', [None, 'pg_url', 'mariadb_url'])
def test_an_all_in_one_upgraded_cold_finishes_what_it_had_started(
        request, tmp_path, database, ironic):
    options = {}
    if database is not None:
        options['OS_DATABASE__CONNECTION'] = request.getfixturevalue(
            database)
    nodes = batch.create_nodes(ironic, 6)
    done, waiting = list(nodes)[:2], list(nodes)[2:]
    proc, url = embedded.start(tmp_path, ironic.url, previous.build(),
                               'old.log', **options)
    try:
        batch.introspect(ironic, [url], {u: nodes[u] for u in done}, 120)
        batch.start_all([url], waiting)
        backends.wait_for(lambda: {s['state'] for s in batch.states(
            url, waiting).values()} == {'waiting'}, 60,
            message='the nodes did not reach waiting')
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    proc, url = embedded.start(tmp_path, ironic.url, log='new.log',
                               **options)
    try:
        states = batch.introspect(ironic, [url], {
            u: nodes[u] for u in waiting}, 120, start=False)
        assert {s['state'] for s in states.values()} == {'finished'}
        assert {s['state'] for s in batch.states(url, done).values()} == {
            'finished'}
        for uuid in done:
            data = requests.get('%s/v1/introspection/%s/data' % (url, uuid),
                                timeout=30)
            assert data.status_code == 200, data.text
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
