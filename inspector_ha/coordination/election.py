"""One leadership: a tooz lock, then an epoch in SQL that fences.

The periodic leaders (:mod:`inspector_ha.engine.leadership`) and the
firewall leader (:mod:`inspector_ha.firewall.manager`) are elected the
same way: the member that takes the tooz lock ``leader.<name>`` (an
election built on locks works on every tooz backend; on Redis and
ZooKeeper it is what tooz's own election does) bumps the leadership's
epoch in SQL and leads. Every write it makes as leader runs in a
transaction that first calls :meth:`Election.fence`: once another member
has been elected, the deposed one's writes are refused
(:class:`inspector_ha.db.leaders.Fenced`), whatever the lock said.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import sqlalchemy as sa

from inspector_ha.coordination import tooz_backend
from inspector_ha.db import api as db_api
from inspector_ha.db import leaders

Fenced = leaders.Fenced
#: ``fence(conn)``: what a leader calls first in each transaction.
Fence = Callable[[sa.Connection], None]


class Campaign:
    """When a member that does not lead a leadership tries for it.

    Every ``period`` seconds while it hurries: for ``hurry_for`` seconds
    after it starts and after :meth:`hurry` (called when the group
    shrinks: a leader that dies, is paused past its lease or stops leaves
    the group, and its lock lapses with its membership). Otherwise every
    ``steady_period`` seconds, a safety net: a steady group has its
    leaders, and a try for a held lock is a round trip to the backend.
    """

    def __init__(self, period: float, steady_period: float,
                 hurry_for: float) -> None:
        self._period = period
        self._steady_period = steady_period
        self._hurry_for = hurry_for
        self._hurry_until = time.monotonic() + hurry_for
        self._next_try = 0.0

    def hurry(self) -> None:
        """Try at once, then every ``period`` for ``hurry_for`` s."""
        now = time.monotonic()
        self._hurry_until = now + self._hurry_for
        self._next_try = now

    def try_if_due(self, reset: threading.Event,
                   hold: Callable[[], bool]) -> bool | None:
        """Hurry first if ``reset`` is set (and clear it: the group shrank,
        or this member stepped down for that, so a leader may be gone);
        then, if a try is due, ``hold()``'s answer (the next try is
        scheduled after it), else None."""
        if reset.is_set():
            reset.clear()
            self.hurry()
        if not self.due():
            return None
        held = hold()
        self.tried()
        return held

    def tried(self) -> None:
        """A try was made (won or lost): schedule the next one."""
        now = time.monotonic()
        self._next_try = now + (self._period if now < self._hurry_until
                                else self._steady_period)

    def due(self) -> bool:
        return time.monotonic() >= self._next_try

    def wait_time(self) -> float:
        """Seconds until the next try is due."""
        return max(0.0, self._next_try - time.monotonic())


class Election:
    """The leadership ``name`` as this member campaigns for it."""

    def __init__(self, name: str, coordinator: tooz_backend.Coordinator,
                 store: db_api.Store) -> None:
        self.name = name
        self.epoch: int | None = None
        self._coordinator = coordinator
        self._store = store

    def hold(self, lead: Callable[[int], object]) -> bool:
        """If the leadership is free: take it, be elected (the epoch is
        bumped in SQL), call ``lead(epoch)`` and step down when it
        returns. False, at once, if another member holds it."""
        lock = self._coordinator.lock('leader.' + self.name)
        if not lock.try_acquire():
            return False
        try:
            self.epoch = self._store.transaction(
                leaders.elect, self.name, self._coordinator.member_id)
            lead(self.epoch)
        finally:
            self.epoch = None
            lock.release()
        return True

    def fence(self, conn: sa.Connection) -> None:
        """Refuse the transaction of ``conn`` unless this member still
        leads (call it first in every transaction a leader writes in)."""
        leaders.fence(conn, self.name, self.epoch)

    def record_run(self) -> None:
        """Record one run of the leader's periodic work."""
        self._store.transaction(leaders.record_run, self.name,
                                self._coordinator.member_id, self.epoch)
