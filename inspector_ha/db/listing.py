"""Listing introspection statuses, newest first, a page at a time.

Pages are keyset pages on ``(started_at, uuid)`` descending (the index
``nodes_started_idx``): a page after a marker is "rows sorting strictly
after the marker's row", never an OFFSET, so a page costs the same however
deep it is and rows added meanwhile do not shift later pages.
``started_at`` is never NULL: both ``nodes.create`` and ``nodes.restart``
set it.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db import statements as sql


class MarkerNotFound(Exception):
    """The marker UUID names no node row."""


def page(conn: sa.Connection, limit: int, marker: str | None = None,
         states: Iterable[str] | None = None) -> list[models.Node]:
    """Return up to ``limit`` node rows sorting after ``marker``.

    :param marker: the UUID of the last row of the previous page, or None.
    :param states: only rows in one of these states, or None for all.
    :raises MarkerNotFound: ``marker`` names no node row.
    """
    table = sql.NODES.c
    query = sa.select(sql.NODES)
    if states:
        query = query.where(table.state.in_(list(states)))
    if marker is not None:
        query = query.where(_after(_marker_row(conn, marker)))
    query = query.order_by(table.started_at.desc(), table.uuid.desc())
    return [models.detached(models.Node, row._mapping)
            for row in conn.execute(query.limit(limit))]


def _marker_row(conn: sa.Connection, marker: str) -> models.Node:
    row = nodes.get(conn, marker)
    if row is None:
        raise MarkerNotFound('The requested node was not found.')
    return row


def _after(row: models.Node) -> sa.ColumnElement[bool]:
    table = sql.NODES.c
    return sa.or_(table.started_at < row.started_at,
                  sa.and_(table.started_at == row.started_at,
                          table.uuid < row.uuid))
