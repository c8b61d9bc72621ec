"""Private backend servers a test may stop, kill and start again.

Unlike the shared services of :mod:`backends` (one vhost, database or
namespace per test on the machine's RabbitMQ, MariaDB and Redis), each of
these is a process of the test's own, on free loopback ports, so a test can
take it away and bring it back: ``start()`` after ``stop()`` or ``kill()``
serves the SAME port with the SAME data (durable queues, databases, keys).

    with private.RabbitMQ() as rabbit:      # rabbit.url: a transport URL
        rabbit.stop(); rabbit.start()
"""

import os
import pathlib
import shutil
import signal
import subprocess

import backends
import servers

RABBIT_BIN = pathlib.Path('/usr/lib/rabbitmq/bin/rabbitmq-server')


def _binary(name, package):
    path = shutil.which(name) or shutil.which(name, path='/usr/sbin')
    if path is None:
        raise backends.BackendUnavailable(
            f'{name} not found; install Debian package {package} '
            f'{backends.INSTALL_HINT}')
    return path


class _Private(servers.Server):
    """A restartable :class:`servers.Server`."""

    def restart(self, grace=10):
        self.stop(grace)
        return self.start()

    def pause(self):
        """Freeze it (SIGSTOP): it keeps its sockets but answers nothing."""
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self):
        os.killpg(self.proc.pid, signal.SIGCONT)


class Redis(_Private):
    """redis-server with an append-only file, so a restart keeps the keys
    (tooz's locks, memberships) the way a real persistent Redis would."""

    name = 'redis'

    @property
    def url(self):
        return f'redis://127.0.0.1:{self.port}'

    start_timeout = 20

    def _launch(self, timeout):
        self._spawn([_binary('redis-server', 'redis-server'),
                     '--bind', '127.0.0.1', '--port', str(self.port),
                     '--save', '', '--appendonly', 'yes',
                     '--appendfsync', 'no', '--dir', str(self.tmpdir),
                     '--daemonize', 'no'])
        self._wait_ready(self._pong, timeout)

    def _pong(self):
        import redis
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        try:
            return client.ping()
        except redis.exceptions.RedisError:
            return False
        finally:
            client.close()


class MariaDB(_Private):
    """mariadbd on a data directory of its own; ``new_database()`` gives a
    fresh database on it as a SQLAlchemy URL."""

    name = 'mariadb'
    USER = 'inspector'

    def __init__(self, port=None):
        super().__init__(port)
        self.datadir = self.tmpdir / 'data'
        self.socket = self.tmpdir / 'mysqld.sock'

    @property
    def url(self):
        return (f'mysql+pymysql://{self.USER}:{self.USER}@127.0.0.1:'
                f'{self.port}')

    start_timeout = 30

    def _launch(self, timeout):
        first = not self.datadir.exists()
        if first:
            self._install_db()
        self._spawn([_binary('mariadbd', 'mariadb-server'), '--no-defaults',
                     f'--datadir={self.datadir}', '--user=root',
                     '--bind-address=127.0.0.1', f'--port={self.port}',
                     f'--socket={self.socket}', '--skip-name-resolve',
                     '--innodb-buffer-pool-size=64M',
                     '--innodb-flush-log-at-trx-commit=2',
                     f'--pid-file={self.tmpdir / "mysqld.pid"}'])
        self._wait_ready(self._answers, timeout)
        if first:
            self._admin(f"CREATE USER '{self.USER}'@'127.0.0.1' "
                        f"IDENTIFIED BY '{self.USER}'",
                        f"GRANT ALL ON *.* TO '{self.USER}'@'127.0.0.1'")

    def _install_db(self):
        proc = subprocess.run(
            [_binary('mariadb-install-db', 'mariadb-server'), '--no-defaults',
             f'--datadir={self.datadir}', '--user=root',
             '--auth-root-authentication-method=socket', '--skip-test-db'],
            capture_output=True, text=True, timeout=120, check=False)
        if proc.returncode:
            raise backends.BackendUnavailable(
                f'mariadb-install-db failed: {proc.stdout[-2000:]}'
                f'{proc.stderr[-2000:]}')

    def _answers(self):
        try:
            root_connection(self.socket).close()
            return True
        except Exception:
            return False

    def _admin(self, *statements):
        run_as_root(self.socket, *statements)

    def new_database(self):
        """Create a fresh database; return its SQLAlchemy URL."""
        name = backends.unique_name()
        self._admin(f'CREATE DATABASE {name}')
        return f'{self.url}/{name}?charset=utf8mb4'


def root_connection(socket):
    """MariaDB's root over the server's unix socket (socket auth)."""
    import pymysql
    return pymysql.connect(unix_socket=str(socket), user='root',
                           connect_timeout=2, autocommit=True)


def run_as_root(socket, *statements):
    """Run ``statements`` as MariaDB's root, over ``socket``."""
    conn = root_connection(socket)
    try:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
    finally:
        conn.close()


RABBIT_CONF = 'listeners.tcp.1 = 127.0.0.1:{port}\nloopback_users = none\n'


class RabbitMQ(_Private):
    """A RabbitMQ node of its own: its own node name, AMQP, distribution and
    epmd ports, Mnesia directory and Erlang cookie (``HOME``).

    epmd is started here, in the foreground, before the broker, so the
    broker uses it instead of spawning a detached ``epmd -daemon`` that
    would outlive ``stop()``.
    """

    name = 'rabbitmq'

    def __init__(self, port=None):
        super().__init__(port)
        self.epmd_port = backends.free_port()
        self.dist_port = backends.free_port()
        self.node = f'inspha{self.port}@localhost'
        self._epmd = None

    @property
    def url(self):
        return f'rabbit://guest:guest@127.0.0.1:{self.port}/'

    def _env(self):
        base = self.tmpdir
        (base / 'rabbitmq.conf').write_text(RABBIT_CONF.format(
            port=self.port))
        (base / 'enabled_plugins').write_text('[].\n')
        (base / 'rabbitmq-env.conf').write_text('')
        return dict(
            os.environ, HOME=str(base), RABBITMQ_NODENAME=self.node,
            RABBITMQ_NODE_PORT=str(self.port),
            RABBITMQ_DIST_PORT=str(self.dist_port),
            ERL_EPMD_PORT=str(self.epmd_port), ERL_EPMD_ADDRESS='127.0.0.1',
            RABBITMQ_CONF_ENV_FILE=str(base / 'rabbitmq-env.conf'),
            RABBITMQ_CONFIG_FILE=str(base / 'rabbitmq.conf'),
            RABBITMQ_ENABLED_PLUGINS_FILE=str(base / 'enabled_plugins'),
            RABBITMQ_MNESIA_BASE=str(base / 'mnesia'),
            RABBITMQ_LOG_BASE=str(base / 'log'), RABBITMQ_LOGS='-',
            RABBITMQ_PID_FILE=str(base / 'rabbit.pid'),
            RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=(
                '-kernel inet_dist_use_interface {127,0,0,1}'),
            ERL_FLAGS='')

    start_timeout = 60

    def _launch(self, timeout):
        if not RABBIT_BIN.exists():
            raise backends.BackendUnavailable(
                f'RabbitMQ: no {RABBIT_BIN}; install rabbitmq-server '
                f'{backends.INSTALL_HINT}')
        env = self._env()
        self._start_epmd(env)
        self._spawn([str(RABBIT_BIN)], env=env, cwd=self.tmpdir)
        self._wait_ready(self._accepts_login, timeout)

    def _start_epmd(self, env):
        if self._epmd is not None and self._epmd.poll() is None:
            return
        with open(self.tmpdir / 'epmd.log', 'ab') as log:
            self._epmd = subprocess.Popen(
                [_binary('epmd', 'erlang-base'), '-address', '127.0.0.1',
                 '-port', str(self.epmd_port)], env=env, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        backends.wait_for(lambda: backends.port_open(
            '127.0.0.1', self.epmd_port), 10, message='epmd did not start')

    def _accepts_login(self):
        import kombu
        conn = kombu.Connection(f'amqp://guest:guest@127.0.0.1:{self.port}//',
                                connect_timeout=1)
        try:
            conn.connect()
            return True
        except Exception:
            return False
        finally:
            conn.release()

    def stop(self, grace=20):
        super().stop(grace)
        self._stop_epmd()

    def kill(self):
        super().kill()
        self._stop_epmd()

    def _stop_epmd(self):
        if self._epmd is not None:
            servers.terminate(self._epmd, 5)
            self._epmd = None


class Etcd(_Private):
    """A single-member etcd 3 (Debian's etcd-server) on free loopback
    ports; tooz reaches it through its v3 gRPC gateway (etcd3gw)."""

    name = 'etcd'

    def __init__(self, port=None):
        super().__init__(port)
        self.peer_port = backends.free_port()

    @property
    def url(self):
        return f'etcd3+http://127.0.0.1:{self.port}?api_version=v3'

    start_timeout = 30

    def _launch(self, timeout):
        client = f'http://127.0.0.1:{self.port}'
        peer = f'http://127.0.0.1:{self.peer_port}'
        self._spawn([_binary('etcd', 'etcd-server'), '--name', 'test',
                     '--data-dir', str(self.tmpdir / 'data'),
                     '--listen-client-urls', client,
                     '--advertise-client-urls', client,
                     '--listen-peer-urls', peer,
                     '--initial-advertise-peer-urls', peer,
                     '--initial-cluster', f'test={peer}'])
        self._wait_ready(self._healthy, timeout)

    def _healthy(self):
        return etcd_healthy('127.0.0.1', self.port)


def etcd_healthy(host, port):
    """Whether the etcd member at ``host:port`` says it is healthy."""
    import requests
    try:
        return requests.get(f'http://{host}:{port}/health',
                            timeout=1).json().get('health') == 'true'
    except (requests.RequestException, ValueError):
        return False


class PostgreSQL(_Private):
    """A private PostgreSQL cluster (Debian's server binaries, run as the
    ``postgres`` user), trusting loopback connections."""

    name = 'postgresql'

    @property
    def url(self):
        return f'postgresql+psycopg2://postgres@127.0.0.1:{self.port}'

    def _bin(self, name):
        found = sorted(pathlib.Path('/usr/lib/postgresql').glob(
            f'*/bin/{name}'))
        if not found:
            raise backends.BackendUnavailable(
                f'PostgreSQL {name} not found; install Debian package '
                f'postgresql {backends.INSTALL_HINT}')
        return str(found[-1])

    start_timeout = 30

    def _launch(self, timeout):
        data = self.tmpdir / 'data'
        if not data.exists():
            shutil.chown(self.tmpdir, 'postgres', 'postgres')
            subprocess.run([self._bin('initdb'), '-D', str(data), '-A',
                            'trust', '-U', 'postgres'], check=True,
                           capture_output=True, timeout=120,
                           user='postgres', group='postgres')
        # NOTE: the postmaster itself is the child (no runuser in between),
        # so stop() can ask it for a fast shutdown and wait for its end.
        self._spawn([self._bin('postgres'), '-D', str(data), '-p',
                     str(self.port), '-k', str(self.tmpdir), '-c',
                     'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c',
                     'max_connections=300'], user='postgres',
                    group='postgres')
        self._wait_ready(self._answers, timeout)

    def stop(self, grace=10):
        """Fast shutdown (SIGINT: clients are disconnected, unlike the
        smart shutdown of SIGTERM), SIGKILL after ``grace`` seconds."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()

    def _answers(self):
        import psycopg2
        try:
            psycopg2.connect(host='127.0.0.1', port=self.port,
                             user='postgres', dbname='postgres',
                             connect_timeout=1).close()
            return True
        except psycopg2.Error:
            return False

    def new_database(self):
        """Create a fresh database; return its SQLAlchemy URL."""
        import psycopg2
        name = backends.unique_name()
        conn = psycopg2.connect(host='127.0.0.1', port=self.port,
                                user='postgres', dbname='postgres')
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute(f'CREATE DATABASE {name}')
        finally:
            conn.close()
        return f'{self.url}/{name}'
