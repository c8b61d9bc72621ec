"""What a process loads: an API process not the schema migrations'
tools (only the all-in-one process and ``inspector-ha-dbsync`` migrate),
a worker not Flask (it serves only ``/healthcheck``)."""

import subprocess
import sys

import pytest

PROBE = ('import sys, %s; '
         'print(sorted(%r & {name.split(".")[0] for name in sys.modules}))')


def _loaded(module, packages):
    """Which of ``packages`` importing ``module`` loads, in a fresh
    interpreter."""
    return subprocess.run(
        [sys.executable, '-W', 'ignore', '-c', PROBE % (module, packages)],
        capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()


@pytest.mark.parametrize('module,packages', [
    ('inspector_ha.cmd.api', {'alembic', 'mako'}),
    ('inspector_ha.cmd.worker', {'alembic', 'mako', 'flask', 'werkzeug'})],
    ids=['an API process', 'a worker'])
def test_a_process_does_not_load_what_it_never_uses(module, packages):
    assert _loaded(module, packages) == '[]'
