"""The soak's short form: a random fault every 10 s for ``SOAK_SECONDS``
(default 60) on one cluster on PostgreSQL under back-to-back batches,
then the history checker: every introspection finished, none in error.
The long form is ``tests/fault/soak.py --seconds 600 --nodes 150``."""

import os

import pytest

import harness as harness_mod
import private
import soak

SECONDS = float(os.environ.get('SOAK_SECONDS', '60'))


@pytest.fixture
def soak_servers(private_servers, obtain_backend):
    """The suite's RabbitMQ and Redis, and a private PostgreSQL."""
    postgres = private.PostgreSQL()
    try:
        obtain_backend(postgres.start)
        yield harness_mod.Servers(private_servers.rabbit,
                                  private_servers.redis, postgres)
    finally:
        postgres.close()


def test_a_fault_every_ten_seconds_loses_no_introspection(
        tmp_path, ironic, soak_servers):
    soak_servers.ensure_running()
    violations = soak.run(tmp_path, ironic, soak_servers, SECONDS,
                          nodes=20)
    assert not violations, '\n'.join(violations)
