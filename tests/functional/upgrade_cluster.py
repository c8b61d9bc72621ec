"""A cluster of mixed releases for the upgrade tests: processes spawned
from the previous release's venv (:mod:`previous`) or this checkout's,
replaced one at a time, an API on the port of the one it replaces (so
HAProxy, whose health check marks the gap down, routes around it)."""

import json
import os
import pathlib
import signal
import subprocess
import sys

import backends
import servers
import cluster as cluster_mod

FAULT = str(pathlib.Path(__file__).resolve().parents[1] / 'fault')
if FAULT not in sys.path:
    sys.path.insert(0, FAULT)

NEW = cluster_mod.BIN


class MixedCluster(cluster_mod.Cluster):
    """:class:`cluster.Cluster` whose next process runs from ``bindir``."""

    def __init__(self, *args, bindir=NEW, **kwargs):
        super().__init__(*args, **kwargs)
        self.bindir = pathlib.Path(bindir)
        self._serial = 0

    def _spawn(self, command, name, conf, env=None, prefix=()):
        self._serial += 1
        name = '%s-%s%d' % (name, 'new' if self.bindir == NEW else 'old',
                            self._serial)
        own = self._write(name + '.conf', cluster_mod._merge(
            conf, {'DEFAULT': {'host': name}}))
        log = open(self.workdir / (name + '.log'), 'ab')
        proc = subprocess.Popen(
            [*prefix, self.bindir / command, '--config-file', self.base,
             '--config-file', own], stdout=log, stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env=None if env is None else dict(os.environ, **env))
        proc.name = name
        proc.log = self.workdir / (name + '.log')
        proc.bindir = self.bindir
        proc.conf = proc.own = conf
        proc.prefix = prefix
        return proc

    def dbsync(self, *args, bindir=None):
        done = subprocess.run(
            [pathlib.Path(bindir or self.bindir) / 'inspector-ha-dbsync',
             '--config-file', self.base, *args], capture_output=True,
            text=True, cwd=self.workdir, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def upgrade_check(self):
        """``(exit code, {check: (result, details)})`` of this release's
        ``inspector-ha-status upgrade check``."""
        done = subprocess.run(
            [NEW / 'inspector-ha-status', '--config-file', self.base,
             'upgrade', 'check', '--json'], capture_output=True, text=True,
            cwd=self.workdir, timeout=120)
        checks = json.loads(done.stdout.strip().splitlines()[-1])['checks']
        return done.returncode, {c['check']: (c['result'], c['details'])
                                 for c in checks}

    def replace(self, proc, conf=None):
        """SIGTERM ``proc``, wait for it, start its successor from
        ``self.bindir`` (an API on the same port) and wait until it is
        up. ``conf`` replaces the process's own options."""
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        own = dict(conf if conf is not None else proc.conf)
        if proc in self.workers:
            new = self._spawn('inspector-ha-worker', 'worker', own)
            self.workers.append(new)
        else:
            own = cluster_mod._merge(own, {'DEFAULT': {
                'listen_port': int(proc.url.rsplit(':', 1)[1])}})
            new = self._spawn('inspector-ha-api', 'api', own)
            new.url = proc.url
            self.apis.append(new)
        wait_started(new)
        return new

    def live(self, procs):
        return [p for p in procs if p.poll() is None]


def wait_started(proc):
    def started():
        if proc.poll() is not None:
            raise AssertionError('%s exited with %s:\n%s' % (
                proc.name, proc.returncode, servers.log_tail(proc.log)))
        log = proc.log.read_text(errors='replace')
        return 'started with' in log or 'listening on' in log
    backends.wait_for(started, 60, interval=0.1,
                      message='%s did not start' % proc.name)
