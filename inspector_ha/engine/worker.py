"""The HA worker's loop body for one delivered request.

get (done by the consumer) -> lock the node through tooz (not acquired:
put back) -> load the machine from SQL -> advance (illegal event:
consume) -> save with a conditional UPDATE (lost: put back) -> run the
task -> apply its follow-up and mark the request done in one transaction
-> consume -> release. Returning True consumes the message; False leaves
it to be delivered again.

A request whose handling fails on every delivery (a poison request) is
dead-lettered once delivered more than ``[worker] max_deliveries`` times:
closed as ``dead`` with its last failure, and its node, if still in the
attempt, moved to ``error`` with that reason by the usual conditional
write. Every transition this worker attempts is logged as one
``TRANSITION {json}`` line with its outcome (the fault tests' recorder).

:class:`inspector_ha.engine.watch.Watch` makes an idle worker notice a
database or broker that is gone, so that it stops (and its supervisor
restarts it) like a busy one.
"""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

import sqlalchemy as sa

from inspector_ha.common import lifecycle as lifecycle_mod
from inspector_ha.common import logctx
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha.db import conflicts
from inspector_ha.db import ledger
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db.models import Node, Request
from inspector_ha.engine import prepared as prepared_mod
from inspector_ha.engine import tasks as tasks_mod
from inspector_ha.fsm import machine
from inspector_ha.fsm import states as st
from inspector_ha.messaging import objects

LOG = logging.getLogger(__name__)
#: ``node_lock(uuid)``: the coordinator's lock of a node (``try_acquire``,
#: ``release``).
NodeLock = Callable[[str], Any]


class Worker:
    """Handles delivered requests (:meth:`handle`, the consumer's
    callback).

    ``node_lock(uuid)`` is the coordinator's node lock, ``tasks`` the
    :class:`inspector_ha.engine.tasks.Tasks` bound to transitions,
    ``announce(op, uuid, macs)`` tells the firewall party about a node's
    MACs, ``opts`` is the ``[worker]`` group, ``actor`` this member's id
    (recorded with every transition).
    """

    def __init__(self, *, store: db_api.Store, node_lock: NodeLock,
                 tasks: tasks_mod.Tasks, announce: tasks_mod.Announce,
                 lifecycle: lifecycle_mod.Lifecycle, opts: Any,
                 actor: str) -> None:
        self._store = store
        self._node_lock = node_lock
        self._tasks = tasks
        self._announce = announce
        self._life = lifecycle
        self._opts = opts
        self._actor = actor

    def handle(self, message: objects.TransitionRequest) -> bool:
        """Handle one delivered request; True consumes it."""
        if self._life.stop.is_set():
            return False
        logctx.clear()
        try:
            return self._handle(message)
        except retry.Interrupted:
            return False
        except retry.BackendUnavailable as exc:
            LOG.error('Stopping: %s', exc)
            self._life.fail(exc)
            return False
        except Exception as exc:
            LOG.exception('Request %s failed; it will be delivered again',
                          message.request_id)
            self._note_failure(message.request_id, exc)
            return False

    def hold(self, message: objects.TransitionRequest) -> None:
        """Name this member as the holder of a delivered request that
        waits for a slot: if its lease lapses meanwhile, the take-over
        publishes the request again (D3c). Best effort: a failure leaves
        the request to the outbox's re-drive (D2)."""
        try:
            self._store.transaction(ledger.hold, message.request_id,
                                    self._actor)
        except Exception as exc:
            LOG.warning('Could not hold request %s: %r', message.request_id,
                        exc)

    def _note_failure(self, request_id: str, exc: Exception) -> None:
        try:
            self._store.transaction(ledger.note_failure, request_id,
                                    '%s: %s' % (type(exc).__name__, exc))
        except Exception as again:
            LOG.warning('Could not record the failure: %r', again)

    def _handle(self, message: objects.TransitionRequest) -> bool:
        # NOTE: the node's lock is taken on the message's word, so a
        # delivery costs no transaction before it; the request is read
        # under the lock (and a message that names another node than its
        # request is handled again under the right one).
        lock = self._node_lock(message.node_uuid)
        if not lock.try_acquire():
            return self._busy(message)
        try:
            return self._drive(message.request_id, message.node_uuid)
        finally:
            lock.release()

    def _busy(self, message: objects.TransitionRequest) -> bool:
        """Another delivery holds the node: a closed request is consumed,
        an open one put back."""
        request = self._store.transaction(ledger.get, message.request_id)
        if request is None or request.status not in ledger.OPEN:
            return True
        return self._put_back('node %s is locked' % message.node_uuid)

    def _put_back(self, why: str) -> bool:
        LOG.debug('Putting a request back: %s', why)
        metrics.PUT_BACKS.inc()
        self._life.stop.wait(self._opts.requeue_delay)
        return False

    def _drive(self, request_id: str, locked: str) -> bool:
        """Apply request ``request_id`` holding the lock of node
        ``locked``. Read under the lock: a delivery that finished while
        this one waited for the lock has already done the work."""
        request, deliveries, node, ahead = self._store.transaction(
            _count_delivery, request_id, locked, self._tasks.read_ahead,
            self._actor)
        if request is None or request.status not in ledger.OPEN:
            return True
        logctx.bind(request)
        if request.node_uuid != locked:
            LOG.warning('Request %s is of node %s, not of %s as its message '
                        'said', request.id, request.node_uuid, locked)
            return self._handle(objects.transition_request(
                request.id, request.node_uuid, request.event))
        if _parked(request, node):
            LOG.info('Request %s (process) came while node %s is starting; '
                     'it is applied once the node waits', request.id,
                     request.node_uuid)
            return True
        metrics.delivered(request, deliveries)
        if deliveries > self._opts.max_deliveries:
            return self._bury(request, node, deliveries)
        if request.event == st.DELETE:
            return self._delete(request)
        if node is None or request.attempt not in (None, node.attempt):
            return self._reject(request, 'stale: node gone or restarted')
        return self._advance(request, node, ahead)

    def _advance(self, request: Request, node: Node,
                 ahead: prepared_mod.Started | None = None) -> bool:
        if (request.status == ledger.APPLIED and
                st.is_deja_vu(node.state, request.event)):
            follow_up = self._tasks.resume_processing(node)
            if follow_up is not None:
                return self._finish(request, node, *follow_up)
        try:
            to_state = machine.advance(node.state, request.event)
        except machine.IllegalTransition as exc:
            if request.status == ledger.APPLIED:
                return self._done(request, 'already applied; %s' % exc)
            return self._reject(request, str(exc))
        error = None
        if to_state == st.ERROR:
            error = tasks_mod.error_for(request.event, node.state,
                                        ledger.payload(request))
        prepared = self._tasks.prepare(request.event, to_state, node,
                                       request, ahead)
        try:
            saved = self._store.transaction(
                _save, node, request, to_state, self._actor, error, prepared)
        except conflicts.StaleWrite as exc:
            self._log(request, node, request.event, to_state, 'stale')
            return self._put_back(str(exc))
        self._committed(request, node, request.event, to_state, saved.stayed)
        event, error = self._tasks.run(request.event, to_state, saved.node,
                                       request, prepared)
        return self._finish(request, saved.node, event, error,
                            nodes.entered(node, saved))

    def _finish(self, request: Request, node: Node, event: str | None,
                error: str | None,
                entered_at: datetime.datetime | None = None) -> bool:
        try:
            to_state, stayed, parked = self._store.transaction(
                _follow_up, node, request, event, self._actor, error,
                entered_at)
        except (conflicts.StaleWrite, machine.IllegalTransition) as exc:
            LOG.info('Follow-up %s of node %s lost to a newer write: %s',
                     event, node.uuid, exc)
            self._log(request, node, event, None, 'stale')
            if self._store.transaction(_moved_by, node.uuid, request.id):
                # NOTE: by another delivery of this very request (this one
                # was paused past its lock): that one finishes it.
                return True
            return self._done(request, str(exc))
        if event is not None:
            self._committed(request, node, event, to_state, stayed)
        if parked is not None:
            # NOTE: ramdisk data that came while the node was starting,
            # applied at once (still under this node's lock); if that
            # fails, the request stays open and the outbox re-drive
            # publishes it again.
            self._drive(parked, node.uuid)
        return True

    def _committed(self, request: Request, node: Node, event: str,
                   to_state: str | None, stayed: float | None) -> None:
        """Log a committed transition (``stayed``: seconds in the state it
        left); one that ends the introspection takes the node's MACs off
        the PXE white-list at once."""
        self._log(request, node, event, to_state, 'committed')
        metrics.committed(node, to_state, stayed)
        if to_state in st.FINAL_STATES:
            self._announce('remove', node.uuid, ())

    def _log(self, request: Request, node: Node, event: str | None,
             to_state: str | None, outcome: str) -> None:
        """One ``TRANSITION`` line per attempted transition."""
        metrics.series(metrics.TRANSITIONS, event, outcome).inc()
        LOG.info('TRANSITION %s', json.dumps({
            'request': request.id, 'node': node.uuid, 'event': event,
            'from': node.state, 'to': to_state,
            'generation': node.generation + 1, 'actor': self._actor,
            'outcome': outcome}, sort_keys=True))

    def _done(self, request: Request, why: str) -> bool:
        self._store.transaction(_close, request.id, ledger.DONE, why)
        return True

    def _reject(self, request: Request, why: str) -> bool:
        LOG.info('Request %s (%s of node %s) rejected: %s', request.id,
                 request.event, request.node_uuid, why)
        self._store.transaction(ledger.mark, request.id,
                                ledger.REJECTED, why)
        return True

    def _bury(self, request: Request, node: Node | None,
              deliveries: int) -> bool:
        """Dead-letter a request that failed on every delivery."""
        why = 'Request %s was delivered %d times without success' % (
            request.event, deliveries)
        if request.detail:
            why += '; last failure: %s' % request.detail
        LOG.error('Dead-lettering request %s of node %s: %s', request.id,
                  request.node_uuid, why)
        metrics.DEAD_LETTERS.inc()
        failing = node if _failable(node, request) else None
        try:
            stayed = self._store.transaction(
                _close_dead, failing, request, self._actor, why)
        except conflicts.StaleWrite as exc:
            if failing is not None:
                self._log(request, failing, st.FAIL, st.ERROR, 'stale')
            return self._put_back(str(exc))
        if failing is not None:
            self._committed(request, failing, st.FAIL, st.ERROR, stayed)
        return True

    def _delete(self, request: Request) -> bool:
        self._store.transaction(_delete_node_row, request)
        LOG.info('Node %s deleted (request %s)', request.node_uuid,
                 request.id)
        self._announce('remove', request.node_uuid, ())
        return True


class Delivered(NamedTuple):
    """A delivered request as read under its node's lock."""

    request: Request | None
    deliveries: int = 0
    node: Node | None = None
    #: What the task's preparation reads, read in the same transaction
    #: (:meth:`inspector_ha.engine.tasks.Tasks.read_ahead`).
    ahead: prepared_mod.Started | None = None


def _count_delivery(conn: sa.Connection, request_id: str, locked: str,
                    read_ahead: Callable[[sa.Connection, Request, Node],
                                         prepared_mod.Started | None],
                    holder: str) -> Delivered:
    """The request, its deliveries, its node and what its task will read
    (``read_ahead``); an open request's delivery is counted, as held by
    ``holder`` (this worker; a closed
    one's is not: there is nothing left to do; nor is a parked one's,
    which came too early to fail, nor one of another node than
    ``locked``, which is read again under its own node's lock). Only
    None for a request that is not (or no longer) in the ledger."""
    request = ledger.get(conn, request_id)
    if (request is None or request.status not in ledger.OPEN or
            request.node_uuid != locked):
        return Delivered(request)
    node = nodes.get(conn, request.node_uuid)
    if node is None:
        return Delivered(request, ledger.count_delivery(conn, request_id,
                                                        holder))
    if _parked(request, node):
        return Delivered(request, 0, node)
    return Delivered(request, ledger.count_delivery(conn, request_id,
                                                    holder),
                     node, read_ahead(conn, request, node))


def _parked(request: Request, node: Node | None) -> bool:
    """Whether ``request`` is ramdisk data that came while its node was
    still starting: it waits (open in SQL) for the start to finish."""
    return (request.event == st.PROCESS and node is not None and
            node.state == st.STARTING and request.attempt == node.attempt)


def _save(conn: sa.Connection, node: Node, request: Request, to_state: str,
          actor: str, error: str | None,
          prepared: prepared_mod.Prepared | None = None) -> nodes.Moved:
    """Commit the transition, mark the request applied and record what
    the task prepared for it."""
    ledger.mark_open(conn, request.id, ledger.APPLIED)
    saved = nodes.move(conn, node, request.event, to_state, actor,
                       request.id, error)
    if prepared is not None:
        prepared.record(conn, node)
    return saved


def _follow_up(conn: sa.Connection, node: Node, request: Request,
               event: str | None, actor: str, error: str | None,
               entered_at: datetime.datetime | None = None
               ) -> tuple[str | None, float | None, str | None]:
    """Apply the task's follow-up event and mark the request done:
    ``(state reached or None, seconds in the state it left or None, the
    id of ramdisk data parked for the attempt when the node now
    waits)``; ``entered_at``: when the node entered its state, if
    known."""
    to_state: str | None = None
    stayed: float | None = None
    if event is not None:
        to_state = machine.advance(node.state, event)
        stayed = nodes.transition(conn, node, event, to_state, actor,
                                  request.id, error, entered_at)
    ledger.mark_open(conn, request.id, ledger.DONE)
    parked = None
    if to_state == st.WAITING:
        parked = ledger.newest_id(conn, node.uuid, st.PROCESS,
                                  node.attempt, [ledger.PENDING])
    return to_state, stayed, parked


def _moved_by(conn: sa.Connection, uuid: str, request_id: str) -> bool:
    """Whether the node's last transition was made for ``request_id``."""
    table = models.Transition
    return conn.scalar(
        sa.select(table.request_id).where(table.node_uuid == uuid)
        .order_by(table.id.desc()).limit(1)) == request_id


def _close(conn: sa.Connection, request_id: str, status: str,
           why: str) -> None:
    """Close the request unless it is closed already."""
    try:
        ledger.mark_open(conn, request_id, status, why)
    except conflicts.StaleWrite:
        pass


def _failable(node: Node | None, request: Request) -> bool:
    """Whether a dead request's node is still waiting on it."""
    return (node is not None and request.attempt == node.attempt and
            node.state not in st.FINAL_STATES and
            st.target(node.state, st.FAIL) == st.ERROR)


def _close_dead(conn: sa.Connection, node: Node | None, request: Request,
                actor: str, why: str) -> float | None:
    """Close ``request`` as dead and, given ``node``, fail it with ``why``;
    the seconds the node spent in the state it left, if it was failed."""
    stayed: float | None = None
    if node is not None:
        stayed = nodes.transition(conn, node, st.FAIL, st.ERROR, actor,
                                  request.id, why)
    ledger.mark_open(conn, request.id, ledger.DEAD, why)
    return stayed


def _delete_node_row(conn: sa.Connection, request: Request) -> None:
    nodes.delete(conn, request.node_uuid)
    ledger.mark(conn, request.id, ledger.DONE)
