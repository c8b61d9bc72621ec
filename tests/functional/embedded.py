"""The all-in-one ``inspector-ha`` started as a new operator starts it:
no configuration file, the embedded default."""

import os
import re
import subprocess

import backends
import servers
import cluster as cluster_mod


def start(tmp_path, ironic_url, bindir=cluster_mod.BIN, log='aio.log',
          **options):
    """Start ``inspector-ha`` of ``bindir`` with no config file;
    ``options`` are extra environment settings such as
    ``OS_WORKER__REBOOT_THROTTLE='5'`` (or ``OS_DEFAULT__LISTEN_PORT``,
    a port of one's choosing)."""
    env = dict(os.environ, INSPECTOR_HA_STATE=str(tmp_path / 'state'),
               INSPECTOR_HA_IRONIC_URL=ironic_url,
               OS_DEFAULT__LISTEN_PORT=str(backends.free_port()),
               OS_API__DRAIN_TIME='0')
    env.update(options)
    env.pop('INSPECTOR_HA_CONFIG_FILE', None)
    stderr = open(tmp_path / log, 'w+')
    proc = subprocess.Popen([bindir / 'inspector-ha'], env=env,
                            stdout=subprocess.PIPE, stderr=stderr, text=True)
    line = proc.stdout.readline()
    match = re.search(r'listening on (http://\S+?)/?$', line.strip())
    assert match, line + servers.log_tail(tmp_path / log)
    return proc, match.group(1)
