"""The SQL store: an engine plus transactions retried per configuration.

A transaction's function gets a Core :class:`~sqlalchemy.Connection`, not
an ORM session: every statement is a Core statement on the tables
(:mod:`inspector_ha.db.statements`), and the session's unit of work and
its execution path cost about 0.2 ms of CPU per transaction (measured on
SQLite: 0.54-0.65 ms for a read and a conditional update through a
session, 0.33-0.42 through a connection). Connections are kept open
between transactions by SQLAlchemy's pool, sized as oslo.db names it
(:class:`Pool`, from ``[database]``); after a connection is found cut,
the pool drops every connection opened before, and the transaction is
retried on a new one.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import (TYPE_CHECKING, Any, Concatenate, NamedTuple, ParamSpec,
                    TypeVar, cast)

import sqlalchemy as sa
from sqlalchemy import event, exc

from inspector_ha.common import retry

if TYPE_CHECKING:
    from oslo_config import cfg

#: Errors that mean "the database is (perhaps briefly) unavailable" or a
#: deadlock victim; a whole transaction is retried after them.
RETRYABLE = (exc.OperationalError, exc.InterfaceError, exc.TimeoutError)

#: SQLite's ``PRAGMA synchronous`` value: every commit synced, or only
#: the write-ahead log's checkpoints (``[database] sqlite_synchronous``,
#: whose help says what each costs and risks).
SYNCHRONOUS_PRAGMA = {True: 'FULL', False: 'NORMAL'}

_P = ParamSpec('_P')
_T = TypeVar('_T')

LOG = logging.getLogger(__name__)
#: The backend's name in errors, logs and ``/healthcheck``.
BACKEND = 'database'


class Pool(NamedTuple):
    """SQLAlchemy's pool of a store, as ``[database]`` sizes it (oslo.db's
    names): ``size`` connections kept open (0: no limit), ``overflow``
    more opened at once, a transaction beyond those waiting up to
    ``timeout`` seconds, a connection reopened after ``recycle``."""

    size: int = 10
    overflow: int = 10
    timeout: float = 30.0
    recycle: int = 3600

    @classmethod
    def from_conf(cls, group: cfg.ConfigOpts.GroupAttr) -> Pool:
        return cls(group.max_pool_size, group.max_overflow,
                   group.pool_timeout, group.connection_recycle_time)


class Store:
    """Owns the engine; runs functions of a connection in one transaction.

    :param url: SQLAlchemy URL.
    :param policy: a :class:`~inspector_ha.common.retry.RetryPolicy`.
    """

    def __init__(self, url: str, policy: retry.RetryPolicy,
                 pool: Pool = Pool(), idle_timeout: int = 0,
                 sqlite_synchronous: bool = True) -> None:
        self.url = url
        self.engine = _create_engine(url, pool, sqlite_synchronous)
        self._sqlite = self.engine.dialect.name == 'sqlite'
        if idle_timeout:
            _abort_idle_transactions(self.engine, idle_timeout)
        self._policy = policy
        #: When (``time.monotonic()``) a transaction last committed: the
        #: database answered then (the backend watch's probe spared).
        self.answered_at = 0.0

    def transaction(self,
                    func: Callable[Concatenate[sa.Connection, _P], _T],
                    *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run ``func(connection, *args, **kwargs)`` in one transaction.

        The whole transaction is retried on connection loss or deadlock;
        after the retry budget :class:`BackendUnavailable` is raised.
        """
        result = self._policy.call(self._once, func, *args, **kwargs)
        self.answered_at = time.monotonic()
        return result

    def _once(self, func: Callable[Concatenate[sa.Connection, _P], _T],
              *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with self.engine.begin() as connection:
            if self._sqlite:
                _begin_immediate(connection)
            return func(connection, *args, **kwargs)

    def ping(self) -> None:
        """One round trip to the database, not retried (a health check);
        on SQLite without the write lock, so it never waits for a writer."""
        with self.engine.connect() as connection:
            select_one(connection)

    def dispose(self) -> None:
        """Close the pool's connections; a transaction after this opens
        new ones."""
        self.engine.dispose()


def select_one(conn: sa.Connection) -> None:
    """A round trip, nothing more (the probes of the store)."""
    conn.execute(sa.text('SELECT 1'))


def _sqlite_file(url: str) -> bool:
    """Whether ``url`` is of a SQLite database in a file (not in memory:
    each connection to that is a database of its own)."""
    parsed = sa.engine.make_url(url)
    return (parsed.get_backend_name() == 'sqlite' and
            parsed.database not in (None, '', ':memory:') and
            parsed.query.get('mode') != 'memory')


def _create_engine(url: str, pool: Pool,
                   sqlite_synchronous: bool) -> sa.Engine:
    if url.startswith('sqlite'):
        return _sqlite_engine(url, pool, sqlite_synchronous)
    return sa.create_engine(url, **_pool_args(pool))


def _pool_args(pool: Pool) -> dict[str, Any]:
    """``create_engine``'s arguments for ``pool``: the connection given
    back last is taken first (idle ones beyond the load time out), and no
    ping before a transaction (a round trip each): a connection found cut
    makes the pool drop the others of its age, and the transaction is
    retried (Store.transaction) on a new one."""
    return {'pool_size': pool.size, 'max_overflow': pool.overflow,
            'pool_timeout': pool.timeout, 'pool_recycle': pool.recycle,
            'pool_use_lifo': True}


def _sqlite_engine(url: str, pool: Pool, synchronous: bool) -> sa.Engine:
    """An engine on a SQLite file in WAL mode that syncs each commit or,
    not ``synchronous``, only its checkpoints. SQLite keeps a file synced
    that way consistent in WAL mode alone: a database it keeps out of WAL
    mode (in memory, or on a file system without shared memory) syncs
    each commit."""
    # NOTE: a database in memory keeps SQLAlchemy's default pool (each
    # connection to it is a database of its own).
    engine = sa.create_engine(
        url, connect_args={'check_same_thread': False, 'timeout': 30},
        **(_pool_args(pool) if _sqlite_file(url) else {}))

    @event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # NOTE: no implicit BEGIN by the driver: a transaction begins
        # with _begin_immediate; a read outside one (a probe) autocommits.
        dbapi_conn.isolation_level = None
        with contextlib.closing(dbapi_conn.cursor()) as cur:
            mode = cur.execute('PRAGMA journal_mode=WAL').fetchone()[0]
            cur.execute('PRAGMA synchronous=%s' % SYNCHRONOUS_PRAGMA[
                synchronous or mode != 'wal'])
            cur.execute('PRAGMA foreign_keys=ON')

    return engine


def _begin_immediate(conn: sa.Connection) -> None:
    """Take SQLite's write lock as the transaction begins (``BEGIN
    IMMEDIATE``), so that two writers queue on the busy timeout instead
    of one failing as it upgrades a read lock.

    Run by :meth:`Store.transaction` on the driver's connection, not as a
    ``begin`` event listener: any engine event makes SQLAlchemy dispatch
    events around every statement (6 us of CPU each here, a third of a
    read by key), and through ``exec_driver_sql`` this statement cost as
    much as a transaction's read. Any failure is raised as SQLAlchemy's;
    an operational one (the lock still busy after the timeout, a
    read-only file) is retried.
    """
    driver = cast(sqlite3.Connection, conn.connection.driver_connection)
    try:
        driver.execute('BEGIN IMMEDIATE')
    except sqlite3.Error as error:
        raise exc.DBAPIError.instance('BEGIN IMMEDIATE', None, error,
                                      sqlite3.Error) from error


_IDLE_SETTINGS = {
    'postgresql': "SET idle_in_transaction_session_timeout = '%ds'",
    'mariadb': 'SET SESSION idle_transaction_timeout = %d',
}
#: The dialects whose servers may have an idle transaction timeout.
_MYSQL_FAMILY = ('mysql', 'mariadb')


def _abort_idle_transactions(engine: sa.Engine, seconds: int) -> None:
    """Make the server abort transactions idle for ``seconds``.

    A process frozen inside a transaction (SIGSTOP, VM pause) would
    otherwise keep its row locks, and with them block every election and
    writer, for as long as it is frozen. MariaDB has the setting whether
    the URL says ``mysql`` or ``mariadb``; Oracle MySQL has none (setting
    it would fail every connection): one warning says so.
    """
    name = engine.dialect.name
    if name not in _IDLE_SETTINGS and name not in _MYSQL_FAMILY:
        return
    warned: list[bool] = []

    @event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        with contextlib.closing(dbapi_conn.cursor()) as cur:
            statement = _IDLE_SETTINGS.get(_server(name, cur))
            if statement is None:
                if not warned:
                    warned.append(True)
                    LOG.warning(
                        'The database is MySQL, which has no idle '
                        'transaction timeout: a process frozen inside a '
                        'transaction keeps its row locks until it wakes '
                        '(use MariaDB or PostgreSQL for this bound)')
                return
            cur.execute(statement % seconds)
        dbapi_conn.commit()


def _server(dialect: str, cursor: Any) -> str:
    """``postgresql``, ``mariadb`` or ``mysql``: the server behind a
    dialect (a ``mysql`` URL may name a MariaDB server)."""
    if dialect not in _MYSQL_FAMILY:
        return dialect
    cursor.execute('SELECT VERSION()')
    version = str(cursor.fetchone()[0]).lower()
    return 'mariadb' if 'mariadb' in version else 'mysql'


def retry_policy(conf_group: cfg.ConfigOpts.GroupAttr,
                 stop: threading.Event) -> retry.RetryPolicy:
    return retry.RetryPolicy(BACKEND, conf_group.retry_count,
                             conf_group.retry_timeout, stop, RETRYABLE,
                             location=retry.without_credentials(
                                 conf_group.connection))
