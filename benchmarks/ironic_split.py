"""Ironic where one process is not the ceiling (issue 15 step 2):
``ironic-api`` and an ``ironic-conductor`` with a wide thread pool,
talking JSON-RPC, on a fresh MariaDB database. Ironic 39's
``api_workers`` above 1 fails: each worker binds the port itself, and
every one but the first dies with "Address already in use".

The API and the conductor read one configuration file. The conductor's
``host`` is ``127.0.0.1``: a conductor whose JSON-RPC port is not the
default registers as ``<host>:<port>``, which is where the API's JSON-RPC
client finds it.
"""

import subprocess

import testpath  # noqa: F401  (tests/functional on sys.path)
import backends
import servers
import ironic_server

#: What the split layout adds to the all-in-one configuration.
EXTRA_CONF = """\
[json_rpc]
auth_strategy = noauth
host_ip = 127.0.0.1
port = {rpc_port}
[conductor]
workers_pool_size = {pool_size}
[database]
max_pool_size = {db_pool_size}
max_overflow = {db_overflow}
"""
#: Database connections each Ironic process keeps. oslo.db keeps 5 and
#: opens any more a call needs for that call alone: with more calls in
#: flight, a quarter of the conductor's and of the API's sampled time
#: went to opening MariaDB connections (PyMySQL builds a TLS context for
#: each), on 2026-11-29 (benchmarks/results/README.md).
DB_POOL_SIZE = 50
#: MariaDB's ``max_connections`` (151, Debian's default), which the two
#: Ironic processes' pools and overflows must stay within.
MARIADB_CONNECTIONS = 151


def db_overflow(db_pool_size):
    """``[database] max_overflow``: oslo.db's 50, less what keeps the two
    processes' connections within :data:`MARIADB_CONNECTIONS`."""
    return max(0, min(50, MARIADB_CONNECTIONS // 2 - db_pool_size))


class SplitIronic(ironic_server.Ironic):
    """``ironic-api`` and one ``ironic-conductor`` on MariaDB; the
    database is dropped on close."""

    name = 'ironic-split'

    def __init__(self, api_workers=1, pool_size=300,
                 db_pool_size=DB_POOL_SIZE):
        self.rpc_port = backends.free_port()
        super().__init__(extra_conf=EXTRA_CONF.format(
            rpc_port=self.rpc_port, pool_size=pool_size,
            db_pool_size=db_pool_size, db_overflow=db_overflow(db_pool_size)))
        self.api_workers = api_workers
        self.database = None
        self.conductor = None
        self.conductor_log = self.tmpdir / 'ironic-conductor.log'

    def _conf_fields(self):
        return dict(super()._conf_fields(),
                    host='127.0.0.1',
                    rpc_transport='json-rpc', api_workers=self.api_workers)

    @property
    def database_url(self):
        """Its MariaDB database's SQLAlchemy URL (once started)."""
        return self.database

    start_timeout = 90

    def _launch(self, timeout):
        if self.database is None:
            self.database = backends.mariadb_url()
        self._configure()
        self._spawn_conductor()
        self._spawn([str(self.venv / 'bin' / 'ironic-api'),
                     '--config-file', str(self.conf_path)], cwd=self.tmpdir)
        self._wait_ready(self._serves_fake_hardware, timeout)

    def _spawn_conductor(self):
        with open(self.conductor_log, 'ab') as log:
            self.conductor = subprocess.Popen(
                [str(self.venv / 'bin' / 'ironic-conductor'),
                 '--config-file', str(self.conf_path)], cwd=self.tmpdir,
                stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)

    def _serves_fake_hardware(self):
        """The API answers and a conductor has registered the driver."""
        if self.conductor.poll() is not None:
            raise backends.BackendUnavailable(
                f'ironic-conductor exited with {self.conductor.returncode}; '
                f'log: {self.conductor_log}')
        if not self._answers():
            return False
        drivers = self.request('GET', '/v1/drivers')['drivers']
        return any(d['name'] == 'fake-hardware' and d['hosts']
                   for d in drivers)

    @property
    def procs(self):
        return [self.proc, self.conductor]

    @property
    def running(self):
        return super().running and self.conductor.poll() is None

    def stop(self, grace=10):
        super().stop(grace)
        if self.conductor is not None:
            servers.terminate(self.conductor, grace)

    def kill(self):
        super().kill()
        if self.conductor is not None:
            servers.kill_group(self.conductor)

    def close(self):
        super().close()
        if self.database is not None:
            backends.drop_database(self.database)
            self.database = None
