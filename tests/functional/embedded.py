"""The all-in-one ``inspector-ha`` started as a new operator starts it:
no configuration file, the embedded default."""

import os
import re
import subprocess

import backends
import servers
import cluster as cluster_mod


def start(tmp_path, ironic_url, **options):
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
    assert match, line + servers.log_tail(tmp_path / 'aio.log')
    return proc, match.group(1)
