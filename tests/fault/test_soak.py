"""The soak's short form: a random fault every 10 s for ``SOAK_SECONDS``
(default 60) on one cluster under back-to-back batches, then the history
checker. The long form is ``tests/fault/soak.py --seconds 600``."""

import os

import soak

SECONDS = float(os.environ.get('SOAK_SECONDS', '60'))


def test_a_fault_every_ten_seconds_leaves_a_valid_history(
        tmp_path, ironic, private_servers):
    private_servers.ensure_running()
    violations = soak.run(tmp_path, ironic, private_servers, SECONDS,
                          nodes=20)
    assert not violations, '\n'.join(violations)
