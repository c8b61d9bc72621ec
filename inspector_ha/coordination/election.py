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

from collections.abc import Callable
from sqlalchemy import orm

from inspector_ha.coordination import tooz_backend
from inspector_ha.db import api as db_api
from inspector_ha.db import leaders

Fenced = leaders.Fenced
#: ``fence(session)``: what a leader calls first in each transaction.
Fence = Callable[[orm.Session], None]


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

    def fence(self, session: orm.Session) -> None:
        """Refuse the transaction of ``session`` unless this member still
        leads (call it first in every transaction a leader writes in)."""
        leaders.fence(session, self.name, self.epoch)

    def record_run(self) -> None:
        """Record one run of the leader's periodic work."""
        self._store.transaction(leaders.record_run, self.name,
                                self._coordinator.member_id, self.epoch)
