"""``inspector-ha-dbsync upgrade`` on the real databases: idempotent,
the migrations walk down and up again, and expand migrations only add."""

import shutil
import textwrap

import pytest

from inspector_ha.db import migration

import schema_guard

DATABASES = ['pg_url', 'mariadb_url']


@pytest.mark.parametrize('database', DATABASES)
def test_the_schema_upgrades_twice_and_walks_down_and_up(request, database):
    url = request.getfixturevalue(database)
    migration.upgrade(url)
    migration.upgrade(url)
    assert migration.current(url) == migration.head()
    migration.downgrade(url, 'base')
    assert migration.current(url) is None
    migration.upgrade(url)
    assert migration.current(url) == migration.head()


@pytest.mark.parametrize('database', DATABASES)
def test_a_0_1_0_schema_expands_then_contracts_to_the_heads(
        request, database):
    url = request.getfixturevalue(database)
    migration.upgrade(url, '0003')
    migration.upgrade(url, migration.EXPAND)
    assert migration.pending(url, 'expand') == []
    migration.upgrade(url, migration.CONTRACT)
    assert migration.at_head(url)


@pytest.mark.parametrize('database', DATABASES)
def test_no_expand_migration_drops_renames_or_changes_a_type(
        request, database):
    url = request.getfixturevalue(database)
    assert schema_guard.expand_violations(url) == []


BAD = {
    'drop': "op.drop_column('nodes', 'error')",
    'rename': "op.alter_column('requests', 'detail', "
              "new_column_name='details')",
    'type': "op.alter_column('nodes', 'state', type_=sa.String(8))",
    'not_null': "op.alter_column('nodes', 'error', nullable=False, "
                "existing_type=sa.Text)",
    'required_column': "op.add_column('nodes', sa.Column('owner', "
                       "sa.String(64), nullable=False))",
}


@pytest.mark.parametrize('kind', sorted(BAD))
def test_the_guard_catches_an_expand_migration_written_to_break_it(
        pg_url, tmp_path, kind):
    scripts = tmp_path / 'migrations'
    shutil.copytree(migration.SCRIPTS, scripts,
                    ignore=shutil.ignore_patterns('__pycache__'))
    (scripts / 'versions' / '0099_bad.py').write_text(textwrap.dedent('''\
        from alembic import op
        import sqlalchemy as sa

        revision = '0099'
        down_revision = %r
        branch_labels = None
        depends_on = None


        def upgrade():
            %s


        def downgrade():
            pass
        ''') % (migration.branch_head('expand'), BAD[kind]))
    found = schema_guard.expand_violations(pg_url, scripts)
    assert [rev for rev, _ in found] == ['0099'], found
