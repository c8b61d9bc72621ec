"""A real inspector-ha cluster in subprocesses: N API processes and M
workers sharing one database, broker and coordination backend."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time


import backends
import servers

BIN = pathlib.Path(sys.executable).parent
#: Periodic work every second (timeouts after 5 s): elections and
#: failovers show within a test's patience.
FAST_PERIODIC = {
    'DEFAULT': {'clean_up_period': 1, 'timeout': 5},
    'worker': {'redrive_period': 1},
    'periodic': {'ironic_sync_period': 1, 'data_cleanup_period': 1}}


class Cluster:
    """Processes of this checkout's console scripts, with log files.

    :param conf: ``{group: {option: value}}`` merged into the base config.
    """

    def __init__(self, workdir, database, transport, coordination, ironic,
                 apis=2, workers=3, conf=None):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.database = database
        self.apis = []
        self.workers = []
        self._n_apis = apis
        self._n_workers = workers
        self.base = self._write('base.conf', _merge(
            _base(database, transport, coordination, ironic,
                  self.workdir), conf or {}))

    def _write(self, name, groups):
        path = self.workdir / name
        lines = []
        for group, options in groups.items():
            lines.append('[%s]' % group)
            lines.extend('%s = %s' % kv for kv in options.items())
        path.write_text('\n'.join(lines) + '\n')
        return path

    def start(self):
        subprocess.run([BIN / 'inspector-ha-dbsync', '--config-file',
                        self.base, 'upgrade'], check=True,
                       capture_output=True)
        for _ in range(self._n_workers):
            self.add_worker()
        for _ in range(self._n_apis):
            self.add_api()
        for api in self.apis:
            backends.wait_for(lambda: _answers(api.url), 60,
                              message='API %s did not answer' % api.url)
        return self

    def add_worker(self, conf=None, prefix=(), env=None):
        """A worker; ``prefix`` comes before its command (``ip netns exec
        <ns>``: a worker on a host of its own); ``env``: more environment
        variables."""
        name = 'worker-%d' % len(self.workers)
        proc = self._spawn('inspector-ha-worker', name, conf or {}, env,
                           prefix=prefix)
        self.workers.append(proc)
        return proc

    def add_api(self, conf=None, env=None):
        name = 'api-%d' % len(self.apis)
        port = backends.free_port()
        conf = _merge(conf or {}, {'DEFAULT': {'listen_port': port}})
        proc = self._spawn('inspector-ha-api', name, conf, env)
        proc.url = 'http://127.0.0.1:%d' % port
        self.apis.append(proc)
        return proc

    def _spawn(self, command, name, conf, env=None, prefix=()):
        own = self._write(name + '.conf', _merge(conf, {'DEFAULT': {
            'host': name}}))
        log = open(self.workdir / (name + '.log'), 'ab')
        proc = subprocess.Popen(
            [*prefix, BIN / command, '--config-file', self.base,
             '--config-file', own], stdout=log, stderr=subprocess.STDOUT,
            env=None if env is None else dict(os.environ, **env))
        proc.name = name
        proc.conf = own
        proc.own = conf
        proc.prefix = prefix
        proc.log = self.workdir / (name + '.log')
        return proc

    def restart(self, proc):
        """Start ``proc``'s command again (same files, same port) in its
        place; return the new process."""
        new = subprocess.Popen(proc.args, stdout=open(proc.log, 'ab'),
                               stderr=subprocess.STDOUT)
        for attr in ('name', 'log', 'conf', 'own', 'prefix', 'url'):
            if hasattr(proc, attr):
                setattr(new, attr, getattr(proc, attr))
        group = self.apis if proc in self.apis else self.workers
        group[group.index(proc)] = new
        return new

    @property
    def api_urls(self):
        return [api.url for api in self.apis if api.poll() is None]

    def stop(self, timeout=30):
        """SIGTERM everything; return {name: exit code}."""
        procs = [p for p in self.apis + self.workers if p.poll() is None]
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        codes = {}
        for proc in self.apis + self.workers:
            try:
                codes[proc.name] = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                codes[proc.name] = 'killed'
        return codes

    def dump_stacks(self):
        """SIGUSR1 to every live process: each writes its threads' stacks
        to its log (faulthandler), to explain a stall after the fact."""
        for proc in self.apis + self.workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGUSR1)
        time.sleep(0.5)  # NOTE: faulthandler writes asynchronously

    def status(self):
        """``inspector-ha-status --json`` of this cluster, decoded."""
        return json.loads(subprocess.run(
            [BIN / 'inspector-ha-status', '--config-file', self.base,
             '--json'], check=True, capture_output=True, text=True).stdout)

    def logs(self, lines=40):
        return '\n'.join('== %s\n%s' % (p.name, servers.log_tail(
            p.log, lines)) for p in self.apis + self.workers)


def _answers(url):
    return backends.answers(url + '/', timeout=1)


def _base(database, transport, coordination, ironic, workdir):
    return {
        'DEFAULT': {'transport_url': transport, 'listen_address':
                    '127.0.0.1', 'state_path': workdir, 'debug': 'false',
                    'auth_strategy': 'noauth'},
        'database': {'connection': database},
        'coordination': {'backend_url': coordination},
        'ironic': {'auth_type': 'none', 'endpoint_override': ironic},
        'worker': {'pool_size': 4, 'redrive_period': 5,
                   'redrive_after': 20},
        'processing': {'store_data': 'database'},
        # NOTE: no drain at SIGTERM: tests stop whole clusters; the
        # drain tests set their own.
        'api': {'drain_time': 0},
        'oslo_messaging_rabbit': {'amqp_durable_queues': 'true'},
    }


def _merge(base, extra):
    """``base`` with ``extra``'s options; an option ``extra`` sets to
    None is left out."""
    merged = {g: dict(o) for g, o in base.items()}
    for group, options in extra.items():
        section = merged.setdefault(group, {})
        section.update(options)
        for name in [n for n, value in options.items() if value is None]:
            del section[name]
    return merged




def member_prefix(proc):
    """What the member id of ``proc`` starts with (``<name>.<pid>.``; a
    random part follows)."""
    return '%s.%d.' % (proc.name, proc.pid)


def process_of(the_cluster, member):
    """The worker process of ``the_cluster`` that is tooz ``member``."""
    return next(w for w in the_cluster.workers
                if member.startswith(w.name + '.'))
