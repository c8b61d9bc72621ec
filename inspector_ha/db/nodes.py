"""Node rows: reads and conditional writes.

Every transition is ``UPDATE nodes ... WHERE uuid AND state AND
generation``; zero rows updated means another writer won and this write
is not applied (:class:`~inspector_ha.db.conflicts.StaleWrite`).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any, NamedTuple

import sqlalchemy as sa

from inspector_ha.common import timeutils
from inspector_ha.db import conflicts
from inspector_ha.db import models
from inspector_ha.db import ledger
from inspector_ha.db import results
from inspector_ha.db import statements as sql
from inspector_ha.fsm import states

#: The event recorded for a row created in ``enrolling`` (no FSM event
#: leads there: only discovery creates such rows).
ENROLL = 'enroll'
#: The columns of a node row.
COLUMNS = tuple(column.key for column in sql.NODES.c)


class InvalidState(Exception):
    """The node is in a state that does not allow the operation."""

    def __init__(self, uuid: str, state: str, operation: str) -> None:
        super().__init__('Invalid state %r of node %s for %s' %
                         (state, uuid, operation))
        self.state = state


def get(conn: sa.Connection, uuid: str) -> models.Node | None:
    """The node's row (read with a statement built once, as a model
    object no session tracks), or None."""
    row = results.first(conn, sql.NODE, {'b_uuid': uuid})
    return None if row is None else models.detached(models.Node, row)


class Moved(NamedTuple):
    """A committed move: the row as the write left it (not read again),
    the seconds the node spent in the state it left (None when it stays
    in it or its entry is not known) and when it entered the new one."""

    node: models.Node
    stayed: float | None
    at: datetime.datetime


def transition(conn: sa.Connection, node: models.Node, event: str,
               to_state: str, actor: str, request_id: str | None = None,
               error: str | None = None,
               entered_at: datetime.datetime | None = None) -> float | None:
    """Commit ``node``'s move to ``to_state`` if nobody moved it first.

    ``entered_at``, when the caller knows it, is when the node entered
    its current state (else it is read from the history).

    :returns: the seconds the node spent in the state it leaves; None
        when it stays in it (a self-loop) or its entry is not in the
        history.
    :raises StaleWrite: the node's state or generation changed.
    """
    return move(conn, node, event, to_state, actor, request_id,
                error, entered_at).stayed


def move(conn: sa.Connection, node: models.Node, event: str,
         to_state: str, actor: str, request_id: str | None = None,
         error: str | None = None,
         entered_at: datetime.datetime | None = None) -> Moved:
    """:func:`transition`, also giving the row as this write left it
    and when it was made."""
    entered = None
    if to_state != node.state:
        entered = entered_at or _entered_at(conn, node)
    now = timeutils.utcnow()
    values: dict[str, Any] = {'state': to_state,
                              'generation': node.generation + 1}
    if to_state in states.FINAL_STATES:
        values.update(finished_at=now, error=error)
    _conditional_update(conn, node, values)
    if to_state in states.FINAL_STATES:
        delete_attributes(conn, node.uuid)
        _close_attempt(conn, node, to_state, request_id)
    record(conn, node.uuid, event, node.state, to_state,
           values['generation'], actor, request_id, now)
    stayed = None
    if entered is not None:
        stayed = max(0.0, (now - entered).total_seconds())
    return Moved(_copy(node, values), stayed, now)


def entered(before: models.Node, moved: Moved) -> datetime.datetime | None:
    """When the node ``moved`` from ``before`` entered its state, without
    reading the history: at the move, unless it stayed in the state (the
    worker's ``start`` in ``starting``, entered when it started)."""
    if moved.node.state != before.state:
        return moved.at
    if before.state == states.STARTING:
        return before.started_at
    return None


def _copy(node: models.Node, values: dict[str, Any]) -> models.Node:
    """A detached row: ``node`` with ``values`` written over it."""
    columns = {name: getattr(node, name) for name in COLUMNS}
    columns.update(values)
    return models.detached(models.Node, columns)


def _entered_at(conn: sa.Connection,
                node: models.Node) -> datetime.datetime | None:
    """When ``node`` entered its state (:data:`statements.ENTERED_AT`)."""
    return results.scalar(conn, sql.ENTERED_AT, {'b_uuid': node.uuid,
                                                  'b_state': node.state})


def _close_attempt(conn: sa.Connection, node: models.Node, to_state: str,
                   request_id: str | None) -> None:
    """The attempt is over: close its other open requests, so that a late
    redelivery (say of the start request a paused worker held when the
    node timed out) cannot restart the node. Reapply requests and the
    attempt-less delete stay: they act on a finished node."""
    results.rowcount(conn, sql.UPDATE_ATTEMPT, {
        'b_uuid': node.uuid, 'b_attempt': node.attempt,
        'b_kept_event': states.REAPPLY, 'b_statuses': ledger.OPEN,
        'b_id': request_id or '', 'status': ledger.REJECTED,
        'updated_at': timeutils.utcnow(),
        'detail': 'the attempt ended in %s first' % to_state})


def restart(conn: sa.Connection, node: models.Node,
            manage_boot: bool | None, actor: str,
            request_id: str | None) -> int:
    """Start a new introspection attempt of an existing node row."""
    if node.state not in states.STARTABLE_STATES:
        raise InvalidState(node.uuid, node.state, 'introspection')
    values: dict[str, Any] = {
        'state': states.STARTING, 'generation': node.generation + 1,
        'attempt': node.attempt + 1, 'started_at': timeutils.utcnow(),
        'finished_at': None, 'error': None, 'manage_boot': manage_boot}
    _conditional_update(conn, node, values)
    delete_attributes(conn, node.uuid)
    record(conn, node.uuid, states.START, node.state, states.STARTING,
           values['generation'], actor, request_id)
    return values['attempt']


def create(conn: sa.Connection, uuid: str, manage_boot: bool | None,
           actor: str, request_id: str | None) -> int:
    """Insert a node row in ``starting``: its first introspection."""
    _insert(conn, uuid, states.STARTING, manage_boot)
    record(conn, uuid, states.START, None, states.STARTING, 1, actor,
           request_id)
    return 1


def _insert(conn: sa.Connection, uuid: str, state: str,
            manage_boot: bool | None) -> None:
    """A node row's first attempt, in ``state``."""
    results.rowcount(conn, sql.INSERT_NODE, {
        'uuid': uuid, 'state': state, 'generation': 1, 'attempt': 1,
        'started_at': timeutils.utcnow(), 'manage_boot': manage_boot})


def create_enrolling(conn: sa.Connection, uuid: str, actor: str,
                     request_id: str | None,
                     manage_boot: bool | None = True) -> int:
    """Insert the row of a node discovery enrolled (or of an active node
    whose data came, ``manage_boot`` False), in ``enrolling``."""
    _insert(conn, uuid, states.ENROLLING, manage_boot)
    record(conn, uuid, ENROLL, None, states.ENROLLING, 1, actor,
           request_id)
    return 1


def delete(conn: sa.Connection, uuid: str) -> None:
    conn.execute(sa.delete(sql.NODES).where(sql.NODES.c.uuid == uuid))


def _conditional_update(conn: sa.Connection, node: models.Node,
                        values: dict[str, Any]) -> None:
    moved = results.rowcount(conn, sql.MOVE_NODE, dict(
        values, b_uuid=node.uuid, b_state=node.state,
        b_generation=node.generation))
    if moved != 1:
        raise conflicts.StaleWrite('node %s is no longer %s at generation %d' %
                         (node.uuid, node.state, node.generation))


def record(conn: sa.Connection, uuid: str, event: str,
           from_state: str | None, to_state: str, generation: int,
           actor: str, request_id: str | None,
           at: datetime.datetime | None = None) -> None:
    results.rowcount(conn, sql.INSERT_TRANSITION, {
        'node_uuid': uuid, 'event': event, 'from_state': from_state,
        'to_state': to_state, 'generation': generation, 'actor': actor,
        'request_id': request_id, 'at': at or timeutils.utcnow()})


def add_attributes(conn: sa.Connection, uuid: str, name: str,
                   values: Iterable[str]) -> None:
    rows = [{'node_uuid': uuid, 'name': name, 'value': value}
            for value in values]
    if rows:
        conn.execute(sql.INSERT_ATTRIBUTES, rows)


def replace_attributes(conn: sa.Connection, uuid: str, name: str,
                       values: Iterable[str]) -> None:
    """The node's attributes ``name`` are ``values`` (and no others)."""
    results.rowcount(conn, sql.DELETE_NAMED_ATTRIBUTES,
                      {'b_uuid': uuid, 'b_name': name})
    add_attributes(conn, uuid, name, values)


def delete_attributes(conn: sa.Connection, uuid: str) -> None:
    results.rowcount(conn, sql.DELETE_ATTRIBUTES, {'b_uuid': uuid})


def history(conn: sa.Connection, uuid: str) -> list[models.Transition]:
    table = sql.TRANSITIONS.c
    query = (sa.select(sql.TRANSITIONS).where(table.node_uuid == uuid)
             .order_by(table.id))
    return [models.detached(models.Transition, row._mapping)
            for row in conn.execute(query)]
