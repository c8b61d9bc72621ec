"""Connections to a SQLite file kept open between transactions.

SQLAlchemy's pool costs about 25 us of CPU per transaction alone on the
benchmark machine (a ``Connection`` built, a connection checked out and
checked in, its reset on return): as much as a read by key and its
commit together. The SQLite store (:class:`inspector_ha.db.api.Store`)
keeps instead up to ``most`` open ``Connection`` objects, each used by
one transaction at a time, by whichever thread comes; its engine pools
nothing (``NullPool``), so a connection beyond those is opened for its
transaction and closed after it.

A connection whose transaction raised is closed, not kept: it may have
been invalidated, or its rollback may have failed.
"""

from __future__ import annotations

import collections

import sqlalchemy as sa


class KeptConnections:
    """Up to ``most`` idle connections of ``engine`` (0: no limit), the
    last given back taken first."""

    def __init__(self, engine: sa.Engine, most: int) -> None:
        self._engine = engine
        self._most = most
        # NOTE: deque's append and pop are atomic, so threads share it
        # without a lock; two threads giving back at once may keep one
        # more than ``most`` for a while.
        self._idle: collections.deque[sa.Connection] = collections.deque()
        self._closed = False

    def take(self) -> sa.Connection:
        """An open connection, not in a transaction."""
        try:
            return self._idle.pop()
        except IndexError:
            return self._engine.connect()

    def give_back(self, connection: sa.Connection) -> None:
        """Keep ``connection`` (its transaction ended) for the next one,
        or close it if as many are idle already, or if closed."""
        if self._closed or 0 < self._most <= len(self._idle):
            connection.close()
        else:
            self._idle.append(connection)

    def close(self) -> None:
        """Close the idle connections; those in use are closed as they
        are given back."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()
