"""Real backends for the functional tests.

Plain helpers, no pytest in here: ``tests/conftest.py`` and
``tests/functional/conftest.py`` wrap them in fixtures.  When a backend
cannot be reached every helper raises :class:`BackendUnavailable` (a
``RuntimeError``) naming the backend and how to start it; the fixtures turn
that into a skip outside CI and into a failure when ``CI=true``.

Shared services, started by ``tools/install-test-deps.sh``: PostgreSQL
127.0.0.1:5432, MariaDB 127.0.0.1:3306, Redis 127.0.0.1:6379 and RabbitMQ
127.0.0.1:5672.  Each call gets its own database, Redis namespace or RabbitMQ
vhost.  ZooKeeper and Ironic run as private processes on free ports.
"""

import atexit
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
import zipfile
from concurrent import futures
from urllib import parse

import redis
import requests
import sqlalchemy
from sqlalchemy import pool

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
INSTALL_HINT = 'or run `bash tools/install-test-deps.sh` as root'
PG_BASE = 'postgresql+psycopg2://postgres@127.0.0.1:5432'
MARIADB_BASE = 'mysql+pymysql://root@127.0.0.1:3306'
REDIS_BASE = 'redis://127.0.0.1:6379'
RABBIT_HOST, RABBIT_PORT = '127.0.0.1', 5672


class BackendUnavailable(RuntimeError):
    """A backend the tests need cannot be reached or started."""


def in_ci():
    return os.environ.get('CI') == 'true'


def unique_name(prefix='inspector_ha_test'):
    return f'{prefix}_{uuid.uuid4().hex[:12]}'


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def port_open(host, port, timeout=1.0):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for(predicate, timeout, interval=0.05, message=None, ignore=()):
    """Poll ``predicate`` until it returns something truthy, and return that.

    Exceptions listed in ``ignore`` count as "not yet".  Raises TimeoutError
    (with ``message``) once ``timeout`` seconds have passed.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = predicate()
            if result:
                return result
        except ignore:
            pass
        if time.monotonic() >= deadline:
            raise TimeoutError(message or f'{predicate!r} not true after '
                               f'{timeout} s')
        time.sleep(interval)


def _terminate(proc, grace):
    """SIGTERM the process group of ``proc``, SIGKILL it after ``grace`` s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            pass
    _kill_group(proc)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _log_tail(path, lines=30):
    try:
        return ''.join(pathlib.Path(path).read_text(errors='replace')
                       .splitlines(True)[-lines:])
    except OSError:
        return ''


# --- PostgreSQL and MariaDB -------------------------------------------------

def _admin_engine(url, admin_db):
    url = sqlalchemy.engine.make_url(url).set(database=admin_db)
    return sqlalchemy.create_engine(url, poolclass=pool.NullPool,
                                    isolation_level='AUTOCOMMIT')


def _create_database(base, admin_db, backend, start, **query):
    url = sqlalchemy.engine.make_url(base).set(database=unique_name())
    url = url.update_query_dict(query) if query else url
    engine = _admin_engine(url, admin_db)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE {url.database}')
    except sqlalchemy.exc.OperationalError as exc:
        raise BackendUnavailable(
            f'{backend} at {base} is unreachable '
            f'({" ".join(str(exc.orig).split())}); start it with '
            f'`{start}` {INSTALL_HINT}') from exc
    finally:
        engine.dispose()
    return url.render_as_string(hide_password=False)


def postgres_url():
    """Create a fresh PostgreSQL database; return its SQLAlchemy URL.

    Base URL: ``INSPECTOR_HA_TEST_PG``, default user postgres on
    127.0.0.1:5432 (trust auth).
    """
    base = os.environ.get('INSPECTOR_HA_TEST_PG', PG_BASE).rstrip('/')
    return _create_database(base, 'postgres', 'PostgreSQL',
                            'pg_ctlcluster --skip-systemctl-redirect '
                            '$(ls /etc/postgresql) main start')


def mariadb_url():
    """Create a fresh MariaDB database; return its SQLAlchemy URL.

    Base URL: ``INSPECTOR_HA_TEST_MARIADB``, default root with an empty
    password on 127.0.0.1:3306.
    """
    base = os.environ.get('INSPECTOR_HA_TEST_MARIADB', MARIADB_BASE)
    return _create_database(base.rstrip('/'), 'mysql', 'MariaDB',
                            'start-stop-daemon --start --oknodo --background '
                            '--exec /usr/sbin/mariadbd', charset='utf8mb4')


def _kill_mariadb_sessions(conn, name):
    rows = conn.exec_driver_sql(
        'SELECT id FROM information_schema.processlist '
        'WHERE db = %s AND id != CONNECTION_ID()', (name,)).fetchall()
    for (session_id,) in rows:
        try:
            conn.exec_driver_sql(f'KILL {int(session_id)}')
        except sqlalchemy.exc.DBAPIError:
            pass  # it ended on its own meanwhile


def drop_database(url):
    """Drop a database made by :func:`postgres_url` or :func:`mariadb_url`,
    ending the sessions still connected to it."""
    url = sqlalchemy.engine.make_url(url)
    is_pg = url.get_backend_name() == 'postgresql'
    engine = _admin_engine(url, 'postgres' if is_pg else 'mysql')
    try:
        with engine.connect() as conn:
            if is_pg:
                conn.exec_driver_sql(
                    f'DROP DATABASE IF EXISTS {url.database} WITH (FORCE)')
            else:
                _kill_mariadb_sessions(conn, url.database)
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS {url.database}')
    finally:
        engine.dispose()


# --- Redis and RabbitMQ ------------------------------------------------------

def redis_url():
    """Return a tooz URL for Redis with a namespace of its own.

    tooz's redis driver takes ``namespace`` from the query string and
    prefixes all its keys with it.  Base URL: ``INSPECTOR_HA_TEST_REDIS``.
    """
    base = os.environ.get('INSPECTOR_HA_TEST_REDIS', REDIS_BASE).rstrip('/')
    client = redis.Redis.from_url(base, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        raise BackendUnavailable(
            f'Redis at {base} is unreachable ({exc}); start it with '
            '`redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 '
            '--save "" --appendonly no --dir /var/lib/redis --logfile '
            f'/var/log/redis/ci.log` {INSTALL_HINT}') from exc
    finally:
        client.close()
    return f'{base}?namespace={unique_name()}'


def flush_redis_namespace(url):
    """Delete every key in the namespace of a :func:`redis_url` URL."""
    split = parse.urlsplit(url)
    namespace = parse.parse_qs(split.query)['namespace'][-1]
    client = redis.Redis.from_url(parse.urlunsplit(split._replace(query='')))
    try:
        keys = list(client.scan_iter(match=f'{namespace}*', count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def _rabbitmqctl(*args):
    ctl = shutil.which('rabbitmqctl')
    if ctl is None:
        raise BackendUnavailable('RabbitMQ: rabbitmqctl not found; install '
                                 f'rabbitmq-server {INSTALL_HINT}')
    proc = subprocess.run([ctl, '--quiet', *args], capture_output=True,
                          text=True, timeout=60, check=False)
    if proc.returncode:
        raise BackendUnavailable(
            f'RabbitMQ: `rabbitmqctl {" ".join(args)}` failed: '
            f'{(proc.stderr or proc.stdout).strip()}; start it with '
            f'`rabbitmq-server -detached` {INSTALL_HINT}')
    return proc.stdout


def rabbit_url():
    """Create a fresh vhost that guest may use; return its transport URL."""
    if not port_open(RABBIT_HOST, RABBIT_PORT):
        raise BackendUnavailable(
            f'RabbitMQ is not listening on {RABBIT_HOST}:{RABBIT_PORT}; start '
            f'it with `rabbitmq-server -detached` {INSTALL_HINT}')
    vhost = unique_name()
    _rabbitmqctl('add_vhost', vhost)
    _rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*')
    return f'rabbit://guest:guest@{RABBIT_HOST}:{RABBIT_PORT}/{vhost}'


def delete_vhost(url):
    """Delete the vhost of a :func:`rabbit_url` URL, queues and all."""
    _rabbitmqctl('delete_vhost',
                 parse.unquote(parse.urlsplit(url).path.lstrip('/')))


# --- private server processes ------------------------------------------------

class _Server:
    """A child process in its own process group, with a temp dir and log."""

    name = 'server'
    proc = None

    def __init__(self, port=None):
        self.port = port or free_port()
        self.tmpdir = pathlib.Path(tempfile.mkdtemp(prefix=f'{self.name}-'))
        self.log_path = self.tmpdir / f'{self.name}.log'
        atexit.register(self.close)

    def _spawn(self, argv, **kwargs):
        with open(self.log_path, 'ab') as log:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True, **kwargs)

    def _wait_ready(self, ready, timeout):
        def check():
            if self.proc.poll() is not None:
                raise BackendUnavailable(
                    f'{self.name} exited with {self.proc.returncode}; '
                    f'last log lines ({self.log_path}):\n'
                    f'{_log_tail(self.log_path)}')
            return ready()
        try:
            wait_for(check, timeout, message=f'{self.name} not ready after '
                     f'{timeout} s; log: {self.log_path}')
        except TimeoutError as exc:
            self.kill()
            raise BackendUnavailable(str(exc)) from exc

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace=10):
        """Graceful stop (SIGTERM, then SIGKILL after ``grace`` seconds)."""
        if self.proc is not None:
            _terminate(self.proc, grace)

    def kill(self):
        """Crash it: SIGKILL the whole process group at once."""
        if self.proc is not None:
            _kill_group(self.proc)

    def close(self):
        """Stop it and remove its temp dir (logs included)."""
        self.stop()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        atexit.unregister(self.close)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.close()


def zookeeper_classpath(seed_packages=('zookeeper', 'libzookeeper-java')):
    """zookeeper.jar from Debian's packages plus its manifest Class-Path
    closure (all in /usr/share/java) and a log4j binding for slf4j."""
    try:
        files = subprocess.run(['dpkg', '-L', *seed_packages], check=False,
                               capture_output=True, text=True).stdout.split()
    except FileNotFoundError:
        files = []
    todo = [f for f in files if f.endswith('/zookeeper.jar')]
    todo += ['/usr/share/java/slf4j-log4j12.jar',
             '/usr/share/java/log4j-1.2.jar']
    seen = []
    while todo:
        jar = todo.pop(0)
        if jar in seen or not os.path.exists(jar):
            continue
        seen.append(jar)
        todo.extend(_manifest_class_path(jar))
    if not any(j.endswith('/zookeeper.jar') for j in seen):
        raise BackendUnavailable('ZooKeeper: zookeeper.jar not found; '
                                 f'install Debian package zookeeper '
                                 f'{INSTALL_HINT}')
    return seen


def _manifest_class_path(jar):
    with zipfile.ZipFile(jar) as zf:
        try:
            text = zf.read('META-INF/MANIFEST.MF').decode()
        except KeyError:
            return []
    entries, current = {}, None
    for line in text.splitlines():
        if line.startswith(' ') and current:
            entries[current] += line[1:]
        elif ':' in line:
            current, _, value = line.partition(':')
            entries[current] = value.strip()
    base = os.path.dirname(jar)
    return [os.path.join(base, p)
            for p in entries.get('Class-Path', '').split()]


class ZooKeeper(_Server):
    """A private standalone ZooKeeper on a free loopback port.

    ``start()`` may be called again after ``stop()`` or ``kill()``: same port,
    same data.
    """

    name = 'zookeeper'
    LOG4J = ('log4j.rootLogger=INFO, CONSOLE\n'
             'log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n'
             'log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n'
             'log4j.appender.CONSOLE.layout.ConversionPattern='
             '%d{ISO8601} %-5p [%t:%C{1}@%L] %m%n\n')

    @property
    def url(self):
        return f'zookeeper://127.0.0.1:{self.port}'

    def _write_config(self):
        conf = self.tmpdir / 'conf'
        conf.mkdir(exist_ok=True)
        (self.tmpdir / 'data').mkdir(exist_ok=True)
        (conf / 'log4j.properties').write_text(self.LOG4J)
        (conf / 'zoo.cfg').write_text(
            f'tickTime=500\ninitLimit=10\nsyncLimit=5\n'
            f'dataDir={self.tmpdir / "data"}\nclientPort={self.port}\n'
            'clientPortAddress=127.0.0.1\nadmin.enableServer=false\n'
            '4lw.commands.whitelist=ruok,stat,srvr\nmaxClientCnxns=0\n'
            'autopurge.purgeInterval=0\n')
        return conf

    def four_letter(self, word, timeout=1.0):
        with socket.create_connection(('127.0.0.1', self.port), timeout) as s:
            s.sendall(word.encode())
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
        return b''.join(chunks).decode()

    def start(self, timeout=30):
        if self.running:
            return self
        java = shutil.which('java')
        if java is None:
            raise BackendUnavailable('ZooKeeper: java not found; install '
                                     f'default-jre-headless {INSTALL_HINT}')
        conf = self._write_config()
        classpath = ':'.join([str(conf), *zookeeper_classpath()])
        self._spawn([java, '-Xmx256m', '-XX:+UseSerialGC',
                     '-XX:TieredStopAtLevel=1',
                     '-Dzookeeper.jmx.log4j.disable=true',
                     '-cp', classpath,
                     'org.apache.zookeeper.server.quorum.QuorumPeerMain',
                     str(conf / 'zoo.cfg')])
        self._wait_ready(lambda: self._ruok(), timeout)
        return self

    def _ruok(self):
        # 'imok' comes as soon as the process listens; 'srvr' tells when it
        # actually serves requests (a fraction of a second later).
        try:
            return (self.four_letter('ruok') == 'imok' and
                    self.four_letter('srvr').startswith('Zookeeper version'))
        except OSError:
            return False


IRONIC_CONF = """\
[DEFAULT]
host = {host}
auth_strategy = noauth
rpc_transport = {rpc_transport}
use_stderr = true
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_firmware_interfaces = fake,no-firmware
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor
default_network_interface = noop
default_inspect_interface = fake
default_deploy_interface = fake
default_boot_interface = fake
[api]
host_ip = 127.0.0.1
port = {port}
api_workers = {api_workers}
restrict_lookup = {restrict_lookup}
[conductor]
automated_clean = false
[dhcp]
dhcp_provider = none
[database]
connection = {database}
sqlite_synchronous = false
[oslo_concurrency]
lock_path = {tmpdir}/locks
"""


class Ironic(_Server):
    """A real all-in-one Ironic 39 (fake-hardware, noauth, SQLite).

    Runs from the venv at ``INSPECTOR_HA_IRONIC_VENV`` (default
    ``<repo>/.venv-ironic``).
    """

    name = 'ironic'
    HEADERS = {'X-OpenStack-Ironic-API-Version': 'latest'}

    def __init__(self, port=None, restrict_lookup=True, venv=None,
                 extra_conf='', seed_database=None):
        """``seed_database``: an Ironic SQLite database to start from (a
        copy of it is used)."""
        super().__init__(port)
        self.extra_conf = extra_conf
        self.venv = pathlib.Path(venv or os.environ.get(
            'INSPECTOR_HA_IRONIC_VENV', REPO_ROOT / '.venv-ironic'))
        self.restrict_lookup = restrict_lookup
        self.conf_path = self.tmpdir / 'ironic.conf'
        self._schema_made = False
        if seed_database:
            shutil.copyfile(seed_database, self.database_file)
            self._schema_made = True
        self._local = threading.local()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.port}'

    def start(self, timeout=60):
        if self.running:
            return self
        if not (self.venv / 'bin' / 'ironic').exists():
            raise BackendUnavailable(
                f'Ironic: no {self.venv}/bin/ironic; '
                f'set INSPECTOR_HA_IRONIC_VENV {INSTALL_HINT}')
        self._configure()
        self._spawn([str(self.venv / 'bin' / 'ironic'),
                     '--config-file', str(self.conf_path)], cwd=self.tmpdir)
        self._wait_ready(self._answers, timeout)
        return self

    def _configure(self):
        """Write its configuration file; create its schema once."""
        self.conf_path.write_text(IRONIC_CONF.format(
            **self._conf_fields()) + self.extra_conf)
        if not self._schema_made:
            self._dbsync()
            self._schema_made = True

    def _conf_fields(self):
        """The values :data:`IRONIC_CONF` is filled with."""
        return {'host': unique_name('ironic'), 'port': self.port,
                'tmpdir': self.tmpdir, 'rpc_transport': 'none',
                'api_workers': 1,
                'database': self.database_url,
                'restrict_lookup': str(self.restrict_lookup).lower()}

    @property
    def database_url(self):
        """Its database's SQLAlchemy URL."""
        return f'sqlite:///{self.database_file}'

    @property
    def database_file(self):
        """Its SQLite database (while it runs on SQLite)."""
        return self.tmpdir / 'ironic.sqlite'

    @property
    def procs(self):
        """Its processes started here (each a master of others)."""
        return [self.proc]

    def _dbsync(self):
        proc = subprocess.run(
            [str(self.venv / 'bin' / 'ironic-dbsync'), '--config-file',
             str(self.conf_path), 'create_schema'], cwd=self.tmpdir,
            capture_output=True, text=True, timeout=120, check=False)
        if proc.returncode:
            raise BackendUnavailable(f'Ironic: ironic-dbsync failed:\n'
                                     f'{proc.stderr[-3000:]}')

    def _answers(self):
        try:
            return requests.get(self.url + '/', timeout=2).status_code == 200
        except requests.RequestException:
            return False

    # --- HTTP -------------------------------------------------------------

    def request(self, method, path, expect=(200,), **kwargs):
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self.HEADERS)
        resp = session.request(method, self.url + path, timeout=30, **kwargs)
        if resp.status_code not in expect:
            raise RuntimeError(f'Ironic {method} {path}: {resp.status_code} '
                               f'{resp.text[:500]}')
        return resp.json() if resp.content else None

    def create_node(self, name=None, macs=(), bmc_address=None,
                    provision_state='manageable'):
        """Create a fake-hardware node with one PXE port per MAC, move it to
        ``provision_state`` (enroll, manageable or available); return its
        UUID."""
        body = {'driver': 'fake-hardware'}
        if name:
            body['name'] = name
        if bmc_address:
            body['driver_info'] = {'ipmi_address': bmc_address}
        node = self.request('POST', '/v1/nodes', expect=(201,), json=body)
        for mac in macs:
            self.request('POST', '/v1/ports', expect=(201,), json={
                'node_uuid': node['uuid'], 'address': mac,
                'pxe_enabled': True})
        steps = {'enroll': [], 'manageable': [('manage', 'manageable')],
                 'available': [('manage', 'manageable'),
                               ('provide', 'available')]}[provision_state]
        for verb, target in steps:
            self.set_provision_state(node['uuid'], verb, target)
        return node['uuid']

    def create_nodes(self, specs, workers=2):
        """Create many nodes in parallel; ``specs`` are create_node kwargs.
        Returns the UUIDs in the order of ``specs``."""
        with futures.ThreadPoolExecutor(workers) as pool_:
            return list(pool_.map(lambda kw: self.create_node(**kw), specs))

    def set_provision_state(self, uuid_, verb, wait_for_state=None,
                            timeout=30):
        self.request('PUT', f'/v1/nodes/{uuid_}/states/provision',
                     expect=(202,), json={'target': verb})
        if wait_for_state:
            path = f'/v1/nodes/{uuid_}?fields=provision_state'
            wait_for(lambda: self.request('GET', path)['provision_state']
                     == wait_for_state, timeout, interval=0.02,
                     message=f'node {uuid_} not {wait_for_state} after '
                     f'{timeout} s')

    def get_node(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}')

    def ports(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}/ports/detail')['ports']

    def power_state(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}/states')['power_state']

    def delete_node(self, uuid_):
        self.request('DELETE', f'/v1/nodes/{uuid_}', expect=(204,))
