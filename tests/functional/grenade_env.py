"""Runs the grenade plugin (``devstack/upgrade/``) phase by phase against
real services, with the stand-ins of ``grenade_standins/`` for grenade's
and devstack's shell functions."""

import os
import pathlib
import signal
import subprocess
import time

import backends
import servers
import cluster as cluster_mod

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STANDINS = HERE / 'grenade_standins'
PLUGIN = ROOT / 'devstack' / 'upgrade'


class Grenade:
    """One upgrade of one deployment: its config, saved resources and
    processes under ``workdir``; the base release runs from
    ``base_bin`` with its own devstack plugin from ``base_devstack``."""

    def __init__(self, workdir, base_bin, base_devstack, database,
                 transport, coordination, ironic_url):
        self.workdir = pathlib.Path(workdir)
        self.base_bin = pathlib.Path(base_bin)
        self.base_devstack = pathlib.Path(base_devstack)
        self.port = backends.free_port()
        self.conf_dir = self.workdir / 'etc'
        self.services = self.workdir / 'services'
        for path in (self.conf_dir, self.services, self.workdir / 'save'):
            path.mkdir(parents=True, exist_ok=True)
        self.ironic_url = ironic_url
        self.database = database
        groups = cluster_mod._merge(cluster_mod._base(
            database, transport, coordination, ironic_url, self.workdir), {
            'DEFAULT': {'listen_port': self.port},
            'oslo_messaging_rabbit': {'rabbit_quorum_queue': 'true'},
            'worker': {'pool_size': 2, 'shutdown_timeout': 5}})
        (self.conf_dir / 'inspector-ha.conf').write_text(''.join(
            '[%s]\n%s\n' % (group, ''.join('%s = %s\n' % kv
                                           for kv in options.items()))
            for group, options in groups.items()))

    def env(self, base):
        bindir = self.base_bin if base else cluster_mod.BIN
        env = dict(os.environ)
        env.update({
            'GRENADE_DIR': str(STANDINS),
            'BASE_DEVSTACK_DIR': str(STANDINS / 'devstack'),
            'TARGET_DEVSTACK_DIR': str(STANDINS / 'devstack'),
            'SAVE_DIR': str(self.workdir / 'save'),
            'SERVICE_DIR': str(self.services),
            'INSPECTOR_HA_TARGET_BIN': str(cluster_mod.BIN),
            'INSPECTOR_HA_INSTALLED_BIN': str(bindir),
            'INSPECTOR_HA_CONF_DIR': str(self.conf_dir),
            'INSPECTOR_HA_PORT': str(self.port),
            'INSPECTOR_HA_PYTHON': str(cluster_mod.BIN / 'python'),
            'IRONIC_URL': self.ironic_url,
            'PATH': '%s:%s' % (bindir, os.environ['PATH']),
        })
        env.pop('OS_AUTH_URL', None)
        return env

    def _bash(self, script, base, timeout=300):
        done = subprocess.run(['bash', '-c', script], env=self.env(base),
                              cwd=self.workdir, capture_output=True,
                              text=True, timeout=timeout)
        return done

    def start_base(self):
        """What the base devstack did: the schema and the processes, by
        the base release's own devstack plugin."""
        done = self._bash(
            'set -e; source "$GRENADE_DIR/functions"; source %s/settings; '
            'source %s/plugin.sh; inspector-ha-dbsync --config-file '
            '"$INSPECTOR_HA_CONF_FILE" upgrade; start_inspector_ha'
            % (self.base_devstack, self.base_devstack), base=True)
        assert done.returncode == 0, done.stdout + done.stderr
        backends.wait_for(lambda: backends.port_open('127.0.0.1', self.port),
                          60, message='the base API did not start')

    def phase(self, script, *args, base=False, expect=0):
        """Run ``devstack/upgrade/<script> <args>`` as grenade does."""
        began = time.monotonic()
        done = subprocess.run(
            ['bash', str(PLUGIN / script), *args], env=self.env(base),
            cwd=self.workdir, capture_output=True, text=True, timeout=300)
        print('grenade phase %s %s: exit %d in %.1f s' % (
            script, ' '.join(args), done.returncode,
            time.monotonic() - began))
        assert done.returncode == expect, '%s %s exited %d:\n%s\n%s' % (
            script, ' '.join(args), done.returncode, done.stdout[-3000:],
            done.stderr[-6000:] + self.logs())
        return done

    def logs(self, lines=30):
        return '\n'.join('== %s\n%s' % (log.name, servers.log_tail(
            log, lines)) for log in sorted(self.services.glob('*.log')))

    def kill_all(self):
        for pidfile in self.services.glob('*.pid'):
            try:
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
