"""The request ledger and outbox.

A request is written in the same transaction as the intent that caused it
(``pending``); the worker that applies its transition marks it ``applied``
in the transition's transaction, and ``done`` (or ``rejected``) in the
transaction of the last step. A delivery of a ``done`` request is a
duplicate and is consumed without effect. ``pending`` or ``applied``
requests untouched for a while are published again (outbox re-drive).
A request whose handling failed on every one of ``[worker]
max_deliveries`` deliveries is closed as ``dead`` (dead-lettered), with
the last failure as its ``detail``.
"""

from __future__ import annotations

import datetime
import json
import uuid as uuidlib
from collections.abc import Iterable
from typing import Any, NamedTuple, cast

import sqlalchemy as sa

from inspector_ha.common import logctx
from inspector_ha.common import timeutils
from inspector_ha.db import conflicts
from inspector_ha.db import dialects
from inspector_ha.db import models
from inspector_ha.db import results
from inspector_ha.db import statements as sql

PENDING = 'pending'
APPLIED = 'applied'
DONE = 'done'
REJECTED = 'rejected'
DEAD = 'dead'

OPEN = (PENDING, APPLIED)


def add(conn: sa.Connection, node_uuid: str, event: str,
        attempt: int | None, payload: Any = None,
        request_id: str | None = None, status: str = PENDING,
        detail: str | None = None,
        held_by: str | None = None) -> models.Request:
    """Insert a request, ``pending`` unless ``status`` says otherwise (a
    closed row records a claim or a result), ``held_by`` the member that
    publishes it; the row as inserted."""
    values = _values(node_uuid, event, attempt, payload, request_id,
                     status, detail, held_by)
    results.rowcount(conn, sql.INSERT_REQUEST, values)
    return models.detached(models.Request, values)


def add_once(conn: sa.Connection, node_uuid: str, event: str,
             attempt: int | None, payload: Any = None,
             status: str = PENDING,
             detail: str | None = None) -> models.Request | None:
    """Add a request whose id is derived from (event, node, attempt), or
    return None if it exists: whoever adds it first is the only one (one
    statement; of two concurrent adds, exactly one inserts)."""
    values = _values(node_uuid, event, attempt, payload,
                     _once_id(node_uuid, event, attempt), status, detail)
    if not dialects.insert_once(conn, sql.REQUESTS, values):
        return None
    return models.detached(models.Request, values)


def _values(node_uuid: str, event: str, attempt: int | None, payload: Any,
            request_id: str | None, status: str,
            detail: str | None,
            held_by: str | None = None) -> dict[str, Any]:
    """The columns of a new request row."""
    now = timeutils.utcnow()
    payload = logctx.stamp(payload)
    return {
        'id': request_id or str(uuidlib.uuid4()), 'node_uuid': node_uuid,
        'event': event, 'attempt': attempt, 'status': status,
        'deliveries': 0,
        'payload': json.dumps(payload) if payload is not None else None,
        'detail': detail, 'created_at': now, 'updated_at': now,
        'held_by': held_by}


def _once_id(node_uuid: str, event: str, attempt: int | None) -> str:
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, '%s/%s/%s' % (
        event, node_uuid, attempt)))


def record_once(conn: sa.Connection, node_uuid: str, name: str,
                attempt: int | None, payload: Any) -> None:
    """Record ``payload`` as the one result ``name`` of an attempt: a
    closed ledger row, like the claims of :func:`claim_once`.

    :raises StaleWrite: a result was recorded already.
    """
    row = add_once(conn, node_uuid, name, attempt, payload=payload,
                   status=DONE)
    if row is None:
        raise conflicts.StaleWrite('%s of node %s attempt %s is recorded '
                                   'already' % (name, node_uuid, attempt))


def recorded(conn: sa.Connection, node_uuid: str, name: str,
             attempt: int | None) -> Any:
    """The payload :func:`record_once` recorded, or None."""
    row = get(conn, _once_id(node_uuid, name, attempt))
    return None if row is None else payload(row)


def get(conn: sa.Connection, request_id: str) -> models.Request | None:
    """The request's row (detached, read with a statement built once),
    or None."""
    return _detached(results.first(conn, sql.REQUEST, {'b_id': request_id}))


def _detached(row: dict[str, Any] | None) -> models.Request | None:
    return None if row is None else models.detached(models.Request, row)


def _request(row: Any) -> models.Request:
    return models.detached(models.Request, row._mapping)


def payload(row: models.Request) -> Any:
    return logctx.unstamp(json.loads(row.payload))[0] if row.payload else {}


def mark(conn: sa.Connection, request_id: str, status: str,
         detail: str | None = None) -> None:
    results.rowcount(conn, sql.UPDATE_REQUEST, {
        'b_id': request_id, 'status': status, 'detail': detail,
        'updated_at': timeutils.utcnow()})


def mark_open(conn: sa.Connection, request_id: str, status: str,
              detail: str | None = None) -> None:
    """Move an open request to ``status``; a closed one is not reopened.

    :raises StaleWrite: the request was closed meanwhile (the transaction
        must roll back: another delivery already did the work).
    """
    values: dict[str, Any] = {'status': status,
                              'updated_at': timeutils.utcnow()}
    if detail is not None:
        values['detail'] = detail
    if _update_open(conn, request_id, values) != 1:
        raise conflicts.StaleWrite('request %s is no longer open' % request_id)


def note_failure(conn: sa.Connection, request_id: str,
                 failure: str) -> None:
    """Keep the last failure of an open request, for its dead letter."""
    _update_open(conn, request_id, {'detail': failure[:2000]})


def _update_open(conn: sa.Connection, request_id: str,
                 values: dict[str, Any]) -> int:
    return results.rowcount(conn, sql.UPDATE_REQUEST_IN, dict(
        values, b_id=request_id, b_statuses=OPEN))


#: Outcomes of :func:`claim_once`.
CLAIMED, TAKEN, STALE = 'claimed', 'taken', 'stale'


class Claimed(NamedTuple):
    """What :func:`claim` found."""

    #: :data:`CLAIMED`, :data:`TAKEN` or :data:`STALE`.
    outcome: str
    #: When an earlier delivery last stamped the claim (:data:`TAKEN`).
    previous: datetime.datetime | None
    #: This delivery's stamp of the claim: a number each stamp raises,
    #: the fence of :func:`renew_claim` (None when :data:`STALE`).
    stamp: int | None


def claim(conn: sa.Connection, node: models.Node, effect: str) -> Claimed:
    """Claim ``effect`` (a side effect such as a power-on) of ``node``'s
    attempt for the delivery that wrote ``node``.

    ``CLAIMED``; ``TAKEN`` if an earlier delivery claimed it (this
    delivery stamps the claim as its own, and is told when the earlier
    one last stamped it); ``STALE`` if the node moved on since (this
    delivery woke up after another took over: it must not act at all).

    The claim is a closed ledger row added by :func:`add_once`, like the
    periodic timeout requests; its ``deliveries`` count its stamps and
    its ``updated_at`` is when it was last stamped.
    """
    if not _latest(conn, node):
        return Claimed(STALE, None, None)
    row = add_once(conn, node.uuid, effect, node.attempt, status=DONE,
                   detail=CLAIMED)
    if row is not None:
        return Claimed(CLAIMED, None, 0)
    claim_id = _once_id(node.uuid, effect, node.attempt)
    previous = _stamped(conn, claim_id)
    return Claimed(TAKEN, previous['updated_at'] if previous else None,
                   _stamp(conn, claim_id, previous))


def claim_once(conn: sa.Connection, node: models.Node,
               effect: str) -> str:
    """The outcome of :func:`claim`."""
    return claim(conn, node, effect).outcome


def renew_claim(conn: sa.Connection, node: models.Node, effect: str,
                stamp: int) -> int | None:
    """Stamp the claim again for the delivery whose stamp is ``stamp``:
    its new stamp, or None if the node moved on or another delivery
    stamped the claim since (it took the effect over)."""
    if not _latest(conn, node):
        return None
    claim_id = _once_id(node.uuid, effect, node.attempt)
    previous = _stamped(conn, claim_id)
    if previous is None or previous['deliveries'] != stamp:
        return None
    return _stamp(conn, claim_id, previous)


def _latest(conn: sa.Connection, node: models.Node) -> bool:
    """Whether ``node`` (as read by this delivery) is the node's latest
    write, locking its row until the transaction ends."""
    current = results.rows(conn, sql.NODE_FOR_UPDATE,
                            {'b_uuid': node.uuid})
    return current == [(node.state, node.generation)]


def _stamped(conn: sa.Connection, claim_id: str) -> dict[str, Any] | None:
    """A claim's stamp (``deliveries``) and when it was stamped."""
    return results.first(conn, sql.CLAIM_STAMPED, {'b_id': claim_id})


def _stamp(conn: sa.Connection, claim_id: str,
           previous: dict[str, Any] | None) -> int:
    """Stamp a claim as read in ``previous`` (called under its node's row
    lock); its new stamp."""
    stamp = (previous['deliveries'] if previous else 0) + 1
    results.rowcount(conn, sql.UPDATE_REQUEST, {
        'b_id': claim_id, 'deliveries': stamp,
        'updated_at': timeutils.utcnow()})
    return stamp


def count_delivery(conn: sa.Connection, request_id: str,
                   holder: str | None = None) -> int:
    """Count one more delivery, by member ``holder``; return the new
    count (0 if unknown)."""
    which = {'b_id': request_id, 'b_holder': holder}
    if conn.dialect.update_returning:
        return results.scalar(conn, sql.COUNT_DELIVERY_RETURNING,
                               which) or 0
    results.rowcount(conn, sql.COUNT_DELIVERY, which)
    return results.scalar(conn, sql.DELIVERIES, which) or 0


def stale(conn: sa.Connection, older_than: float,
          limit: int = 500) -> list[models.Request]:
    """Open requests untouched for ``older_than`` seconds, oldest first."""
    cutoff = timeutils.utcnow() - datetime.timedelta(seconds=older_than)
    table = sql.REQUESTS.c
    query = (sa.select(sql.REQUESTS).where(table.status.in_(OPEN),
                                           table.updated_at < cutoff)
             .order_by(table.updated_at).limit(limit))
    return [_request(row) for row in conn.execute(query)]


def held_by_others(conn: sa.Connection, live: Iterable[str],
                   limit: int = 500) -> list[models.Request]:
    """Open requests held by a member not in ``live`` (its lease lapsed:
    dead, frozen or cut off), oldest first."""
    table = sql.REQUESTS.c
    query = (sa.select(sql.REQUESTS).where(
        table.status.in_(OPEN), table.held_by.is_not(None),
        table.held_by.not_in(list(live)))
        .order_by(table.updated_at).limit(limit))
    return [_request(row) for row in conn.execute(query)]


def release(conn: sa.Connection, requests: Iterable[models.Request]) -> None:
    """Let go of requests their holder no longer holds (each still held
    by it), so that they are published again only by the outbox's
    re-drive if this publication is lost too."""
    table = sql.REQUESTS
    for request in requests:
        conn.execute(sa.update(table).where(
            table.c.id == request.id, table.c.held_by == request.held_by)
            .values(held_by=None, updated_at=timeutils.utcnow()))


def hold(conn: sa.Connection, request_id: str, holder: str) -> None:
    """Name ``holder`` as the member holding open request ``request_id``
    (delivered to it, its delivery not counted yet)."""
    table = sql.REQUESTS
    conn.execute(sa.update(table).where(
        table.c.id == request_id, table.c.status.in_(OPEN))
        .values(held_by=holder))


def touch(conn: sa.Connection, request_ids: Iterable[str]) -> None:
    table = sql.REQUESTS
    conn.execute(sa.update(table).where(table.c.id.in_(request_ids))
                    .values(updated_at=timeutils.utcnow()))


def newest(conn: sa.Connection, node_uuid: str, event: str,
           attempt: int | None) -> models.Request | None:
    """The newest ``event`` request of a node's attempt (one query, no
    other row loaded: a node's requests include 20 KB ramdisk posts)."""
    return _detached(results.first(conn, sql.NEWEST_REQUEST, {
        'b_uuid': node_uuid, 'b_event': event, 'b_attempt': attempt}))


def newest_id(conn: sa.Connection, node_uuid: str, event: str,
              attempt: int | None, statuses: Iterable[str]) -> str | None:
    """The id of the newest ``event`` request of a node's attempt whose
    status is one of ``statuses``, or None."""
    wanted = frozenset(statuses)
    for request_id, status in results.rows(conn, sql.REQUEST_STATUSES, {
            'b_uuid': node_uuid, 'b_event': event, 'b_attempt': attempt}):
        if status in wanted:
            return cast(str, request_id)
    return None


def for_node(conn: sa.Connection,
             node_uuid: str) -> list[models.Request]:
    table = sql.REQUESTS.c
    query = (sa.select(sql.REQUESTS).where(table.node_uuid == node_uuid)
             .order_by(table.created_at))
    return [_request(row) for row in conn.execute(query)]
