"""Session-wide private servers for the functional tests: ZooKeeper,
etcd and Ironic; each coordination backend that holds locks across
processes in turn; and a fresh database of the service's schema on each
database it runs on.  Skip-or-fail logic: ``obtain`` in
``tests/conftest.py``."""

import pytest

import servers
import ironic_server
import private
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
    server = servers.ZooKeeper()
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()


@pytest.fixture
def private_server(request, obtain_backend):
    """A started server of the class a test gives as its indirect
    parameter (:mod:`private`), closed after the test."""
    server = request.param()
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()


@pytest.fixture(scope='session')
def etcd_url(obtain_backend):
    """A private etcd's tooz URL, stopped at the end."""
    server = private.Etcd()
    try:
        yield obtain_backend(server.start).url
    finally:
        server.close()


@pytest.fixture(params=['redis', 'zookeeper', 'etcd'])
def coordination_url(request):
    """The tooz URL of Redis, ZooKeeper and etcd in turn."""
    if request.param == 'redis':
        return request.getfixturevalue('redis_url')
    if request.param == 'zookeeper':
        return request.getfixturevalue('zookeeper').url
    return request.getfixturevalue('etcd_url')


@pytest.fixture(scope='session')
def inspecting_ironic(obtain_backend):
    """A private Ironic 39 inspecting nodes itself (its ``agent``
    interface and inspection rules), stopped at the end. Tests share it:
    create your own nodes, and delete every rule you leave."""
    server = ironic_server.InspectingIronic()
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()


@pytest.fixture(scope='session')
def ironic(obtain_backend):
    """A private all-in-one Ironic 39 with fake hardware, stopped at the
    end.  Tests share it: create your own nodes and delete them."""
    server = ironic_server.Ironic()
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()
