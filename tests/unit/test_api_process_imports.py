"""What an API process loads: not the schema migrations' tools, which
only the all-in-one process and ``inspector-ha-dbsync`` use."""

import subprocess
import sys

PROBE = ('import sys, inspector_ha.cmd.api; '
         'print(sorted({"alembic", "mako"} & set(sys.modules)))')


def test_an_api_process_does_not_load_alembic_or_mako():
    out = subprocess.run([sys.executable, '-W', 'ignore', '-c', PROBE],
                         capture_output=True, text=True, check=True,
                         timeout=120).stdout
    assert out.strip() == '[]'
