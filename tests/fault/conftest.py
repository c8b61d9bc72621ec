"""Fixtures of the fault suite.

``tests/conftest.py`` puts ``tests/functional`` on ``sys.path`` (backends,
cluster, private, ...); the functional fixtures ``ironic`` and
``zookeeper`` are loaded from ``tests/functional/conftest.py`` (pytest
imports each conftest as a module of its own, so they cannot be imported
by name). The private RabbitMQ, Redis and MariaDB are shared by the tests
of a session; each test gets its own database, Redis namespace and queue.
"""

import pytest

import harness as harness_mod
import private
import suite_fixtures

ironic = suite_fixtures.functional_conftest().ironic
zookeeper = suite_fixtures.functional_conftest().zookeeper
etcd_url = suite_fixtures.functional_conftest().etcd_url


@pytest.fixture(scope='session')
def private_servers(obtain_backend):
    servers = harness_mod.Servers(private.RabbitMQ(), private.Redis(),
                                  private.MariaDB())
    try:
        for server in (servers.rabbit, servers.redis, servers.database):
            obtain_backend(server.start)
        yield servers
    finally:
        for server in (servers.rabbit, servers.redis, servers.database):
            server.close()


@pytest.fixture
def make_harness(tmp_path, ironic, private_servers):
    """``make_harness(**kwargs)``: a started :class:`harness.Harness`,
    stopped at the end of the test if the test did not stop it."""
    made = []

    def make(**kwargs):
        private_servers.ensure_running()
        made.append(harness_mod.Harness(tmp_path, ironic, private_servers,
                                        **kwargs))
        return made[-1].start()
    yield make
    harness_mod.stop_left_running(made)
