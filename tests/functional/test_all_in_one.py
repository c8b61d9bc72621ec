"""The all-in-one ``inspector-ha`` with no configuration at all: the
embedded default (SQLite file, tooz file://, in-process messaging)."""

import os
import re
import signal
import subprocess

import backends
import cluster as cluster_mod
import test_cluster_introspection as batch

NODES = 20


def _start(tmp_path, ironic_url, **options):
    """Start ``inspector-ha`` with no config file; ``options`` are extra
    environment settings such as ``OS_WORKER__REBOOT_THROTTLE='5'``."""
    env = dict(os.environ, INSPECTOR_HA_STATE=str(tmp_path / 'state'),
               INSPECTOR_HA_IRONIC_URL=ironic_url,
               OS_DEFAULT__LISTEN_PORT=str(backends.free_port()),
               OS_API__DRAIN_TIME='0', **options)
    env.pop('INSPECTOR_HA_CONFIG_FILE', None)
    log = open(tmp_path / 'aio.log', 'w+')
    proc = subprocess.Popen([cluster_mod.BIN / 'inspector-ha'], env=env,
                            stdout=subprocess.PIPE, stderr=log, text=True)
    line = proc.stdout.readline()
    match = re.search(r'listening on (http://\S+?)/?$', line.strip())
    assert match, line + backends._log_tail(tmp_path / 'aio.log')
    return proc, match.group(1)


def test_the_embedded_default_takes_nodes_from_start_to_finished(
        tmp_path, ironic):
    proc, url = _start(tmp_path, ironic.url)
    try:
        nodes = batch._create_nodes(ironic, NODES)
        states = batch.introspect(ironic, [url], nodes, 120)
        assert {s['state'] for s in states.values()} == {'finished'}
        batch.assert_ironic_was_updated(ironic, list(nodes)[:5])
        assert (tmp_path / 'state' / 'inspector-ha.sqlite').exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
