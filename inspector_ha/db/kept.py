"""Connections kept open between transactions.

Each transaction through SQLAlchemy's pool builds a ``Connection``,
checks a connection out and back in and resets it on return: 34 us of
CPU per empty transaction alone on the benchmark machine, against 7.4 us
on a connection kept open. The store (:class:`inspector_ha.db.api.Store`)
keeps instead up to ``max_idle`` open ``Connection`` objects, each used
by one transaction at a time, by whichever thread comes; its engine pools
nothing (``NullPool``), so a connection beyond those is opened for its
transaction and closed after it. This holds for a SQLite file, for
PostgreSQL and for MariaDB; a SQLite database in memory keeps
SQLAlchemy's pool (each of its connections is a database of its own).

A connection is closed, not kept, after its transaction failed in the
database (a SQLAlchemy error other than a broken constraint: the
connection may be broken) or was interrupted (an exception that is not
an ``Exception``); after an error of the transaction's own or a broken
constraint, rolled back, it is kept.

Like SQLAlchemy's pool, the connections have two ends besides:

- **Lost:** once a transaction finds its connection cut (the database
  restarted, or a proxy between dropped it), every connection opened
  before that moment is closed as it is next taken or given back, so a
  retried transaction runs on a new connection instead of on the next
  dead one (:meth:`KeptConnections.lost`).
- **Recycled:** a connection opened more than ``max_age`` seconds ago is
  closed as it is next taken, before a server or a proxy times it out.
"""

import collections
import time

import sqlalchemy as sa

#: The age in seconds after which a kept connection is closed and a new
#: one opened (SQLAlchemy's ``pool_recycle`` as the store set it before).
MAX_AGE = 3600.0
_OPENED_AT = 'inspector_ha.opened_at'


class KeptConnections:
    """Up to ``max_idle`` idle connections of ``engine`` (0: no limit),
    the last given back taken first."""

    def __init__(self, engine: sa.Engine, max_idle: int,
                 max_age: float = MAX_AGE) -> None:
        self._engine = engine
        self._max_idle = max_idle
        self._max_age = max_age
        # NOTE: deque's append and pop are atomic, so threads share it
        # without a lock; threads giving back at once may keep a few
        # more than ``max_idle`` for a while.
        self._idle: collections.deque[sa.Connection] = collections.deque()
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
            connection.close()

    def give_back(self, connection: sa.Connection) -> None:
        """Keep ``connection`` (its transaction ended) for the next one;
        close it instead if as many are idle already, if it is closed,
        invalidated, still in a transaction or opened before a connection
        was lost, or if these are closed."""
        if (self._closed or connection.closed or connection.invalidated or
                connection.in_transaction() or
                not self._fresh(connection, float('inf')) or
                0 < self._max_idle <= len(self._idle)):
            connection.close()
            return
        self._idle.append(connection)
        if self._closed:
            # NOTE: closed meanwhile, by a thread that found none idle.
            self._close_idle()

    def lost(self) -> None:
        """A connection was found cut: those opened until now are closed
        as they are next taken or given back."""
        self._lost_at = time.monotonic()

    def close(self) -> None:
        """Close the idle connections; those in use are closed as they
        are given back, and none is kept any more."""
        self._closed = True
        self._close_idle()

    def _open(self) -> sa.Connection:
        connection = self._engine.connect()
        connection.info[_OPENED_AT] = time.monotonic()
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
            connection.close()
