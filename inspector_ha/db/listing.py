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
from sqlalchemy import orm

from inspector_ha.db import models


class MarkerNotFound(Exception):
    """The marker UUID names no node row."""


def page(session: orm.Session, limit: int, marker: str | None = None,
         states: Iterable[str] | None = None) -> list[models.Node]:
    """Return up to ``limit`` node rows sorting after ``marker``.

    :param marker: the UUID of the last row of the previous page, or None.
    :param states: only rows in one of these states, or None for all.
    :raises MarkerNotFound: ``marker`` names no node row.
    """
    table = models.Node
    query = sa.select(table)
    if states:
        query = query.where(table.state.in_(list(states)))
    if marker is not None:
        query = query.where(_after(_marker_row(session, marker)))
    query = query.order_by(table.started_at.desc(), table.uuid.desc())
    return list(session.scalars(query.limit(limit)))


def _marker_row(session: orm.Session, marker: str) -> models.Node:
    row = session.get(models.Node, marker)
    if row is None:
        raise MarkerNotFound('The requested node was not found.')
    return row


def _after(row: models.Node) -> sa.ColumnElement[bool]:
    table = models.Node
    return sa.or_(table.started_at < row.started_at,
                  sa.and_(table.started_at == row.started_at,
                          table.uuid < row.uuid))
