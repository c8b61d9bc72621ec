"""The singleton periodic jobs, each run by its elected leader.

Each job is called with the leader's ``fence`` alone (:func:`jobs` binds
what it uses) and calls ``fence(conn)`` first in every transaction
that writes, so a deposed leader writes nothing (see
:mod:`inspector_ha.coordination.election`).
"""

from __future__ import annotations

import datetime
import functools
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

import sqlalchemy as sa

from inspector_ha.common import timeutils
from inspector_ha.coordination.election import Fence
from inspector_ha.db import api as db_api
from inspector_ha.db import ledger
from inspector_ha.db import models
from inspector_ha.ironic import client as ironic_client
from inspector_ha.messaging import queue
from inspector_ha.fsm import states as st

LOG = logging.getLogger(__name__)
#: The most requests of lapsed members one take-over run looks at.
HELD_LIMIT = 500


def redrive(store: db_api.Store, publisher: queue.Publishing,
            older_than: float, fence: Fence) -> None:
    """Publish again requests whose message may have been lost."""
    stale = store.transaction(_touch_stale, fence, older_than)
    _publish(publisher, stale)
    if stale:
        LOG.info('Re-drove %d requests', len(stale))


class TakeOver:
    """Publish again the open requests held by members whose lease lapsed
    (gone from ``members()``, the member group): a worker that died, froze
    or was cut off, or an API process that may not have published what
    it accepted (``doc/guarantees.md`` D3c). A listing without this
    member (``me``) is not trusted.

    An API's request (or one of a member never seen in ``workers()``,
    the workers' group) is published once and let go of, as the outbox
    re-drives it if that copy is lost too. A worker's stays held by it
    until a live member holds or counts it, and is published again after
    one run, then 2, 4 and so on up to ``longest`` seconds: a frozen
    worker's connection stays open, and RabbitMQ may hand a copy to it
    while its prefetch window has room; each such copy fills the window,
    so one copy reaches a live member in the end.
    """

    def __init__(self, *, store: db_api.Store, publisher: queue.Publishing,
                 members: Callable[[], Iterable[str]],
                 workers: Callable[[], Iterable[str]], me: str,
                 period: float, longest: float) -> None:
        self._store = store
        self._publisher = publisher
        self._members = members
        self._workers = workers
        self._me = me
        self._period = period
        self._longest = longest
        #: Workers seen, kept while they hold an open request.
        self._seen_workers: set[str] = set()
        #: request id -> (when it is due again, the wait after that)
        self._schedule: dict[str, tuple[float, float]] = {}

    def __call__(self, fence: Fence) -> None:
        live = set(self._members())
        if self._me not in live:
            return
        workers = set(self._workers())
        held = self._store.transaction(ledger.held_by_others, live,
                                       HELD_LIMIT)
        self._seen_workers = workers | (
            self._seen_workers & {r.held_by for r in held})
        of_workers = [r for r in held if r.held_by in self._seen_workers]
        self._let_go([r for r in held if r.held_by not in self._seen_workers],
                     fence)
        self._publish_due(of_workers, fence, complete=len(held) < HELD_LIMIT)

    def _let_go(self, orphans: list[models.Request], fence: Fence) -> None:
        """Publish once and let go of an API's requests."""
        if not orphans:
            return
        self._store.transaction(_release_held, fence, orphans)
        _publish(self._publisher, orphans)
        _log_taken(orphans)

    def _publish_due(self, held: list[models.Request], fence: Fence,
                     complete: bool) -> None:
        """Publish the workers' requests whose turn came. A listing cut
        at its limit keeps the turns of those it left out."""
        now = time.monotonic()
        if complete:
            self._schedule = {r.id: self._schedule[r.id] for r in held
                              if r.id in self._schedule}
        due = [r for r in held
               if self._schedule.get(r.id, (now, 0.0))[0] <= now]
        if not due:
            return
        self._store.transaction(_touch_held, fence, due)
        _publish(self._publisher, due)
        _log_taken([r for r in due if r.id not in self._schedule])
        for request in due:
            wait = self._schedule.get(request.id, (now, self._period))[1]
            self._schedule[request.id] = (now + wait,
                                          min(2 * wait, self._longest))


def _log_taken(first: list[models.Request]) -> None:
    for holder in sorted({r.held_by or '' for r in first}):
        LOG.info('Took over %d requests of member %s, whose lease lapsed',
                 sum(r.held_by == holder for r in first), holder)


def time_out(store: db_api.Store, publisher: queue.Publishing,
             timeout: float, fence: Fence) -> None:
    """Queue a timeout request for every introspection past its time."""
    if timeout > 0:
        _publish(publisher, store.transaction(_add_timeouts, fence,
                                              timeout))


class IronicSync:
    """Queue a delete request for every node Ironic no longer has.

    A node is taken for gone only when two listings in a row miss it, the
    second begun after the first run read our nodes. One listing is not
    enough: a node created in Ironic and started while Ironic was being
    listed is in our table but not in that listing. No clocks compared.
    """

    def __init__(self, store: db_api.Store, publisher: queue.Publishing,
                 ironic: ironic_client.Ironic) -> None:
        self._store = store
        self._publisher = publisher
        self._ironic = ironic
        self._suspects: frozenset[str] = frozenset()

    def __call__(self, fence: Fence) -> None:
        in_ironic = self._ironic.node_uuids()
        added, self._suspects = self._store.transaction(
            _add_deletes, fence, in_ironic, self._suspects)
        if added:
            LOG.info('Ironic no longer has nodes %s: deleting them',
                     sorted(r.node_uuid for r in added))
        _publish(self._publisher, added)


def clean_up_data(store: db_api.Store, expiry: float,
                  fence: Fence) -> None:
    """Drop introspection data and closed requests past their expiry."""
    store.transaction(_clean_up, fence, expiry)


def _publish(publisher: queue.Publishing,
             added: Iterable[models.Request]) -> None:
    for request in added:
        publisher.publish(request.id, request.node_uuid, request.event)


def _touch_stale(conn: sa.Connection, fence: Fence,
                 older_than: float) -> list[models.Request]:
    fence(conn)
    stale = ledger.stale(conn, older_than)
    ledger.touch(conn, [r.id for r in stale])
    return stale


def _release_held(conn: sa.Connection, fence: Fence,
                  held: list[models.Request]) -> None:
    fence(conn)
    ledger.release(conn, held)


def _touch_held(conn: sa.Connection, fence: Fence,
                held: list[models.Request]) -> None:
    """Stamp the requests published again (so the outbox's re-drive
    waits), under the leader's fence: a deposed leader publishes none."""
    fence(conn)
    ledger.touch(conn, [r.id for r in held])


def _add_timeouts(conn: sa.Connection, fence: Fence,
                  timeout: float) -> list[models.Request]:
    fence(conn)
    cutoff = timeutils.utcnow() - datetime.timedelta(seconds=timeout)
    table = models.Node
    expired = conn.execute(sa.select(table.uuid, table.attempt).where(
        table.finished_at.is_(None), table.started_at < cutoff,
        table.state.not_in(list(st.FINAL_STATES)))).all()
    added = [ledger.add_once(conn, n.uuid, st.TIMEOUT, n.attempt)
             for n in expired]
    return [r for r in added if r is not None]


def _add_deletes(conn: sa.Connection, fence: Fence,
                 in_ironic: Iterable[str], suspects: frozenset[str]
                 ) -> tuple[list[models.Request], frozenset[str]]:
    """Delete requests for the missing ``suspects``; the new suspects."""
    fence(conn)
    missing = frozenset(conn.scalars(sa.select(models.Node.uuid))) - \
        frozenset(in_ironic)
    added = [ledger.add_once(conn, u, st.DELETE, None)
             for u in missing & suspects]
    return [r for r in added if r is not None], missing


def _clean_up(conn: sa.Connection, fence: Fence, expiry: float) -> None:
    fence(conn)
    cutoff = timeutils.utcnow() - datetime.timedelta(seconds=expiry)
    finished = sa.select(models.Node.uuid).where(
        models.Node.finished_at < cutoff)
    conn.execute(sa.delete(models.IntrospectionData).where(
        models.IntrospectionData.node_uuid.in_(finished)))
    conn.execute(sa.delete(models.Request).where(
        models.Request.status.not_in(ledger.OPEN),
        models.Request.updated_at < cutoff))


def jobs(conf: Any, store: db_api.Store, publisher: queue.Publishing,
         ironic: ironic_client.Ironic
         ) -> list[tuple[str, float, Callable[[Fence], None]]]:
    """``[(name, period, job)]``: the periodic jobs ``conf`` enables."""
    wanted: list[tuple[str, float, Callable[[Fence], None]]] = [
        ('timeout', conf.clean_up_period,
         functools.partial(time_out, store, publisher, conf.timeout)),
        ('redrive', conf.worker.redrive_period,
         functools.partial(redrive, store, publisher,
                           conf.worker.redrive_after)),
        ('ironic_sync', conf.periodic.ironic_sync_period,
         IronicSync(store, publisher, ironic)),
        ('data_cleanup', conf.periodic.data_cleanup_period,
         functools.partial(clean_up_data, store,
                           conf.periodic.data_expiry))]
    return [(name, period, job) for name, period, job in wanted if period]
