"""The two writes whose one-statement form differs by database: an insert
that a duplicate key leaves undone, and an insert that replaces the row
of the same key. One statement each instead of a read and a write
(PostgreSQL and SQLite: ``ON CONFLICT``; MySQL and MariaDB: ``INSERT
IGNORE`` and ``ON DUPLICATE KEY UPDATE``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import orm
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite


def insert_once(session: orm.Session, table: sa.Table,
                values: dict[str, Any]) -> bool:
    """Insert ``values`` unless a row has its key: whether it was
    inserted (two concurrent inserts: exactly one is)."""
    dialect = session.get_bind().dialect.name
    if dialect == 'mysql':
        statement: Any = mysql.insert(table).prefix_with('IGNORE')
    else:
        statement = _module(dialect).insert(table).on_conflict_do_nothing()
    result = cast('sa.CursorResult[Any]',
                  session.execute(statement.values(**values)))
    return result.rowcount == 1


def replace(session: orm.Session, table: sa.Table, values: dict[str, Any],
            keys: Sequence[str]) -> None:
    """Insert ``values``, or overwrite the other columns of the row whose
    ``keys`` columns have these values."""
    dialect = session.get_bind().dialect.name
    rest = {name: value for name, value in values.items()
            if name not in keys}
    if dialect == 'mysql':
        statement: Any = mysql.insert(table).values(**values)
        statement = statement.on_duplicate_key_update(**rest)
    else:
        statement = _module(dialect).insert(table).values(**values)
        statement = statement.on_conflict_do_update(index_elements=keys,
                                                    set_=rest)
    session.execute(statement)


def _module(dialect: str) -> Any:
    if dialect == 'postgresql':
        return postgresql
    if dialect == 'sqlite':
        return sqlite
    raise NotImplementedError('database %s is not supported' % dialect)
