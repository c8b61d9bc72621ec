"""Session-wide private servers for the functional tests: ZooKeeper and
Ironic; and a fresh database of the service's schema on each database it
runs on.  Skip-or-fail logic: ``obtain`` in ``tests/conftest.py``."""

import pytest

import backends
from inspector_ha.db import migration


@pytest.fixture(params=['sqlite', 'pg_url', 'mariadb_url'])
def schema_url(request, tmp_path):
    """The URL of a fresh database with the service's schema: SQLite,
    PostgreSQL and MariaDB in turn."""
    if request.param == 'sqlite':
        url = 'sqlite:///%s' % (tmp_path / 'schema.sqlite')
    else:
        url = request.getfixturevalue(request.param)
    migration.upgrade(url)
    return url


@pytest.fixture(scope='session')
def zookeeper(obtain_backend):
    """A private ZooKeeper (``.url`` is a tooz URL), stopped at the end."""
    server = backends.ZooKeeper()
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()


@pytest.fixture(scope='session')
def ironic(obtain_backend):
    """A private all-in-one Ironic 39 with fake hardware, stopped at the
    end.  Tests share it: create your own nodes and delete them."""
    server = backends.Ironic()
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()
