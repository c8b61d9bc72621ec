"""Real backends for the functional tests.

Plain helpers, no pytest in here: ``tests/conftest.py`` and
``tests/functional/conftest.py`` wrap them in fixtures.  When a backend
cannot be reached every helper raises :class:`BackendUnavailable` (a
``RuntimeError``) naming the backend and how to start it; the fixtures turn
that into a skip outside CI and into a failure when ``CI=true``.

Shared services, started by ``tools/install-test-deps.sh``: PostgreSQL
127.0.0.1:5432, MariaDB 127.0.0.1:3306, Redis 127.0.0.1:6379 and RabbitMQ
127.0.0.1:5672.  Each call gets its own database, Redis namespace or RabbitMQ
vhost.  ZooKeeper and Ironic run as private processes on free ports
(:mod:`servers`, :mod:`ironic_server`).
"""

import os
import pathlib
import shutil
import socket
import subprocess
import time
import uuid
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


def answers(url, timeout=2.0):
    """Whether a GET of ``url`` answers 200 within ``timeout`` s."""
    try:
        return requests.get(url, timeout=timeout).status_code == 200
    except requests.RequestException:
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
