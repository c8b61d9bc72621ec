"""``inspector-ha-dbsync``: expand, contract, their guard and the online
data migrations, run as the shipped console script."""

import json
import pathlib
import subprocess
import sys

import pytest
import sqlalchemy as sa
from tooz import coordination

from inspector_ha.coordination import membership
from inspector_ha.db import api as db_api
from inspector_ha.db import migration
from inspector_ha.db import online_migrations

BIN = pathlib.Path(sys.executable).parent


@pytest.fixture
def setup(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'db.sqlite')
    backend = 'file://%s' % (tmp_path / 'coordination')
    conf = tmp_path / 'dbsync.conf'
    conf.write_text('[DEFAULT]\nstate_path = %s\n[database]\nconnection = '
                    '%s\n[coordination]\nbackend_url = %s\n'
                    % (tmp_path, url, backend))
    return url, backend, conf


def dbsync(conf, *args):
    return subprocess.run([BIN / 'inspector-ha-dbsync', '--config-file',
                           conf, *args], capture_output=True, text=True,
                          timeout=120)


def test_expand_then_contract_brings_a_0_1_0_schema_to_both_heads(setup):
    url, _, conf = setup
    migration.upgrade(url, '0003')
    assert dbsync(conf, 'upgrade', '--expand').returncode == 0
    assert migration.pending(url, 'expand') == []
    assert migration.pending(url, 'contract') == ['0005']
    done = dbsync(conf, 'upgrade', '--contract')
    assert done.returncode == 0, done.stderr
    assert migration.at_head(url)
    assert done.stdout.strip().splitlines()[-1] == migration.head()


def test_contract_is_refused_while_a_member_of_the_previous_release_lives(
        setup):
    url, backend, conf = setup
    migration.upgrade(url, migration.EXPAND)
    old = coordination.get_coordinator(backend, b'old-worker')
    old.start(start_heart=True)
    try:
        try:
            old.create_group(membership.GROUP).get()
        except coordination.GroupAlreadyExist:
            pass
        old.join_group(membership.GROUP, json.dumps(
            {'version': '0.1.0'}).encode()).get()
        for args in (['--contract'], []):
            refused = dbsync(conf, 'upgrade', *args)
            assert refused.returncode == 2
            assert 'member old-worker of version 0.1.0 is alive' \
                in refused.stderr
        assert migration.pending(url, 'contract') == ['0005']
        old.leave_group(membership.GROUP).get()
    finally:
        old.stop()
    assert dbsync(conf, 'upgrade', '--contract').returncode == 0


def test_a_new_database_gets_both_branches_from_a_plain_upgrade(setup):
    url, _, conf = setup
    assert dbsync(conf, 'upgrade').returncode == 0
    assert migration.at_head(url)


def test_online_data_migrations_with_none_registered_is_done(setup):
    url, _, conf = setup
    migration.upgrade(url)
    done = dbsync(conf, 'online_data_migrations', '--max-count', '10')
    assert done.returncode == 0
    assert 'No online data migrations' in done.stdout


def _moving(table):
    """A migration copying ``old`` to ``new`` where ``new`` is empty."""
    def count(session):
        return session.execute(sa.select(sa.func.count()).select_from(
            table).where(table.c.new.is_(None))).scalar()

    def migrate(session, limit):
        ids = session.execute(sa.select(table.c.id).where(
            table.c.new.is_(None)).limit(limit)).scalars().all()
        session.execute(sa.update(table).where(table.c.id.in_(ids))
                        .values(new=table.c.old))
        return len(ids)
    return online_migrations.Migration('copy_old_to_new', count, migrate)


def _moving_table(store, rows):
    """A table whose ``old`` column a migration copies into ``new``."""
    meta = sa.MetaData()
    table = sa.Table('moving', meta, sa.Column('id', sa.Integer,
                                               primary_key=True),
                     sa.Column('old', sa.String(8)),
                     sa.Column('new', sa.String(8), nullable=True))
    meta.create_all(store.engine)
    with store.engine.begin() as conn:
        conn.execute(sa.insert(table), rows)
    return table


def test_online_data_migrations_move_in_batches_up_to_max_count(store):
    table = _moving_table(store, [{'id': i, 'old': str(i)}
                                  for i in range(25)])
    mig = [_moving(table)]
    assert online_migrations.remaining(store, mig) == {
        'copy_old_to_new': 25}
    assert online_migrations.run(store, 12, batch=5, migrations=mig) == {
        'copy_old_to_new': (12, 13)}
    assert online_migrations.run(store, None, batch=5, migrations=mig) == {
        'copy_old_to_new': (13, 0)}
    assert online_migrations.remaining(store, mig) == {}


def test_the_contract_guard_names_an_unfinished_online_migration(
        store, monkeypatch, service_conf):
    from inspector_ha.cmd import upgrades
    table = _moving_table(store, [{'id': 1, 'old': 'a'}])
    monkeypatch.setattr(online_migrations, 'MIGRATIONS', (_moving(table),))
    blockers = upgrades.contract_blockers(service_conf, store)
    assert blockers == ['online data migration copy_old_to_new has 1 rows '
                        'left: run "inspector-ha-dbsync '
                        'online_data_migrations"']
    assert isinstance(store, db_api.Store)
