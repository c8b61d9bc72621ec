"""``inspector-ha-dbsync upgrade`` on the real databases: idempotent,
and the migrations walk down and up again."""

import pytest

from inspector_ha.db import migration


@pytest.mark.parametrize('database', ['pg_url', 'mariadb_url'])
def test_the_schema_upgrades_twice_and_walks_down_and_up(request, database):
    url = request.getfixturevalue(database)
    migration.upgrade(url)
    migration.upgrade(url)
    assert migration.current(url) == migration.head()
    migration.downgrade(url, 'base')
    assert migration.current(url) is None
    migration.upgrade(url)
    assert migration.current(url) == migration.head()
