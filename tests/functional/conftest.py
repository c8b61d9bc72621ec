"""Session-wide private servers for the functional tests: ZooKeeper and
Ironic.  Skip-or-fail logic: ``obtain`` in ``tests/conftest.py``."""

import pytest

import backends


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
