"""Connections to a SQLite file kept open between transactions.

Each transaction through SQLAlchemy's pool builds a ``Connection``,
checks a connection out and back in and resets it on return: 34 us of
CPU per empty transaction alone on the benchmark machine, against 7.4 us
on a connection kept open. The SQLite store
(:class:`inspector_ha.db.api.Store`) keeps instead up to ``max_idle``
open ``Connection`` objects, each used by one transaction at a time, by
whichever thread comes; its engine pools nothing (``NullPool``), so a
connection beyond those is opened for its transaction and closed after
it.

A connection is closed, not kept, after its transaction failed in the
database (a SQLAlchemy error other than a broken constraint: the
connection may be broken) or was interrupted (an exception that is not
an ``Exception``); after an error of the transaction's own or a broken
constraint, rolled back, it is kept.
"""

import collections

import sqlalchemy as sa


class KeptConnections:
    """Up to ``max_idle`` idle connections of ``engine`` (0: no limit),
    the last given back taken first."""

    def __init__(self, engine: sa.Engine, max_idle: int) -> None:
        self._engine = engine
        self._max_idle = max_idle
        # NOTE: deque's append and pop are atomic, so threads share it
        # without a lock; threads giving back at once may keep a few
        # more than ``max_idle`` for a while.
        self._idle: collections.deque[sa.Connection] = collections.deque()
        self._closed = False

    def take(self) -> sa.Connection:
        """An open connection, not in a transaction."""
        try:
            return self._idle.pop()
        except IndexError:
            return self._engine.connect()

    def give_back(self, connection: sa.Connection) -> None:
        """Keep ``connection`` (its transaction ended) for the next one;
        close it instead if as many are idle already, if it is closed,
        invalidated or still in a transaction, or if these are closed."""
        if (self._closed or connection.closed or connection.invalidated or
                connection.in_transaction() or
                0 < self._max_idle <= len(self._idle)):
            connection.close()
            return
        self._idle.append(connection)
        if self._closed:
            # NOTE: closed meanwhile, by a thread that found none idle.
            self._close_idle()

    def close(self) -> None:
        """Close the idle connections; those in use are closed as they
        are given back, and none is kept any more."""
        self._closed = True
        self._close_idle()

    def _close_idle(self) -> None:
        while True:
            try:
                connection = self._idle.pop()
            except IndexError:
                return
            connection.close()
