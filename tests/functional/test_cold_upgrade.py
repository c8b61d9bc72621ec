"""A cold upgrade in grenade's order, by the grenade plugin's own scripts
(``devstack/upgrade/``) against real services: ``resources.sh create`` on
the previous release (built from git, started by its own devstack
plugin), ``shutdown.sh``, ``resources.sh verify_noapi``, ``upgrade.sh``,
``resources.sh verify`` (twice: it is safe to repeat), ``destroy``. On
PostgreSQL and on MariaDB."""

import pytest

from inspector_ha.db import migration

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
        assert migration.current(url) == '0003'
        grenade.phase('upgrade.sh')
        assert migration.at_head(url)
        grenade.phase('resources.sh', 'verify')
        grenade.phase('resources.sh', 'verify')
        grenade.phase('resources.sh', 'destroy')
        grenade.phase('shutdown.sh')
    finally:
        grenade.kill_all()
