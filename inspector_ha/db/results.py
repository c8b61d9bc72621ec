"""A statement run through ``Connection.execute``, its result in the
shape its caller reads: the rows it matched, rows as tuples or dicts, the
first row, one value.

The statements are module constants (:mod:`inspector_ha.db.statements`)
with bound parameters, so SQLAlchemy compiles each once per database
and finds it in its compiled cache after that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.expression import Executable


def rowcount(conn: sa.Connection, statement: Executable,
             params: Mapping[str, Any]) -> int:
    """Run a write; the rows it matched."""
    return int(conn.execute(statement, dict(params)).rowcount)


def rows(conn: sa.Connection, statement: Executable,
         params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Run a read (or a write with RETURNING); every row, as tuples."""
    return [tuple(row) for row in conn.execute(statement, dict(params))]


def mappings(conn: sa.Connection, statement: Executable,
             params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Run a read; every row, as dicts of column keys."""
    return [dict(row) for row in
            conn.execute(statement, dict(params)).mappings()]


def first(conn: sa.Connection, statement: Executable,
          params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The first row as a dict of column keys, or None."""
    row = conn.execute(statement, dict(params)).mappings().first()
    return None if row is None else dict(row)


def scalar(conn: sa.Connection, statement: Executable,
           params: Mapping[str, Any]) -> Any:
    """The first column of the first row, or None."""
    return conn.execute(statement, dict(params)).scalar()
