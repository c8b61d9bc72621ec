"""Connections kept open between transactions.

Each transaction through SQLAlchemy's pool builds a ``Connection``,
checks a connection out and back in and resets it on return: 34 us of
CPU per empty transaction alone on the benchmark machine, against 7.4 us
on a connection kept open, and on MariaDB a ``ROLLBACK`` sent to the
server after each. The store (:class:`inspector_ha.db.api.Store`) keeps
instead up to ``max_idle`` open ``Connection`` objects, each used by one
transaction at a time, by whichever thread comes; its engine pools
nothing (``NullPool``). A transaction that finds none idle opens one,
up to twice ``max_idle`` open at once, as SQLAlchemy's pool allowed the
store (``pool_size`` plus as many ``max_overflow``); beyond that it waits
up to :data:`OPEN_WAIT` seconds for one to close, then fails with
SQLAlchemy's ``TimeoutError``, which the store retries. This holds for a
SQLite file, for PostgreSQL and for MariaDB; a SQLite database in memory
keeps SQLAlchemy's pool (each of its connections is a database of its
own).

A connection is closed, not kept, after its transaction failed in the
database (a SQLAlchemy error other than a broken constraint: the
connection may be broken) or was interrupted (an exception that is not
an ``Exception``); after an error of the transaction's own or a broken
constraint, rolled back, it is kept.

Like SQLAlchemy's pool, the connections have two ends besides:

- **Lost:** once a transaction finds its connection cut (the database
  restarted, or a proxy between dropped it), every connection opened
  before that moment is dropped, without a word to the server, as it is
  next taken or given back, so a retried transaction runs on a new
  connection instead of on the next dead one
  (:meth:`KeptConnections.lost`).
- **Recycled:** a connection opened more than ``max_age`` seconds ago is
  closed as it is next taken, before a server or a proxy times it out.
"""

import collections
import threading
import time

import sqlalchemy as sa

#: The age in seconds after which a kept connection is closed and a new
#: one opened (SQLAlchemy's ``pool_recycle`` as the store set it before).
MAX_AGE = 3600.0
#: Seconds a transaction waits for a connection when as many are open as
#: allowed (SQLAlchemy's ``pool_timeout``).
OPEN_WAIT = 30.0
_OPENED_AT = 'inspector_ha.opened_at'


class KeptConnections:
    """Up to ``max_idle`` idle connections of ``engine``, the last given
    back taken first, and up to twice as many open (0: no limit)."""

    def __init__(self, engine: sa.Engine, max_idle: int,
                 max_age: float = MAX_AGE,
                 open_wait: float = OPEN_WAIT) -> None:
        self._engine = engine
        self._max_idle = max_idle
        self._max_age = max_age
        self._open_wait = open_wait
        self._open_slots = (threading.BoundedSemaphore(2 * max_idle)
                            if max_idle else None)
        # NOTE: deque's append and pop are atomic; the lock makes the
        # count of idle connections and the append one step.
        self._idle: collections.deque[sa.Connection] = collections.deque()
        self._giving_back = threading.Lock()
        self._closed = False
        #: When a connection was last found cut (monotonic), or -inf.
        self._lost_at = float('-inf')

    def take(self) -> sa.Connection:
        """An open connection, not in a transaction."""
        while True:
            try:
                connection = self._idle.pop()
            except IndexError:
                return self._open()
            if self._fresh(connection, self._max_age):
                return connection
            self.discard(connection)

    def give_back(self, connection: sa.Connection) -> None:
        """Keep ``connection`` (its transaction ended) for the next one;
        close it instead if as many are idle already, if it is closed,
        invalidated, still in a transaction or opened before a connection
        was lost, or if these are closed."""
        if (self._closed or connection.closed or connection.invalidated or
                connection.in_transaction() or
                not self._fresh(connection, float('inf'))):
            self.discard(connection)
            return
        with self._giving_back:
            kept = not 0 < self._max_idle <= len(self._idle)
            if kept:
                self._idle.append(connection)
        if not kept:
            self.discard(connection)
        elif self._closed:
            # NOTE: closed meanwhile, by a thread that found none idle.
            self._close_idle()

    def discard(self, connection: sa.Connection) -> None:
        """Close ``connection``, which is not kept; one opened before a
        loss is dropped without a word to the server (a rollback there
        would wait on a dead socket, or fail)."""
        if not connection.closed and not connection.invalidated and \
                connection.info.get(_OPENED_AT, 0.0) <= self._lost_at:
            connection.invalidate()
        connection.close()
        if self._open_slots is not None:
            self._open_slots.release()

    def lost(self) -> None:
        """A connection was found cut: those opened until now are dropped
        as they are next taken or given back."""
        self._lost_at = time.monotonic()

    def close(self) -> None:
        """Close the idle connections; those in use are closed as they
        are given back, and none is kept any more."""
        self._closed = True
        self._close_idle()

    def _open(self) -> sa.Connection:
        if self._open_slots is not None and not self._open_slots.acquire(
                timeout=self._open_wait):
            raise sa.exc.TimeoutError(
                'no database connection free within %.0f s (%d open)' % (
                    self._open_wait, 2 * self._max_idle))
        opened_at = time.monotonic()
        try:
            connection = self._engine.connect()
        except BaseException:
            if self._open_slots is not None:
                self._open_slots.release()
            raise
        connection.info[_OPENED_AT] = opened_at
        return connection

    def _fresh(self, connection: sa.Connection, max_age: float) -> bool:
        """Opened after the last loss and at most ``max_age`` ago."""
        opened_at = connection.info.get(_OPENED_AT, float('-inf'))
        return (opened_at > self._lost_at and
                time.monotonic() - opened_at <= max_age)

    def _close_idle(self) -> None:
        while True:
            try:
                connection = self._idle.pop()
            except IndexError:
                return
            self.discard(connection)
