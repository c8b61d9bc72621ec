"""The two writes whose one-statement form differs by database: an insert
that a duplicate key leaves undone, and an insert that replaces the row
of the same key. One statement each instead of a read and a write
(PostgreSQL and SQLite: ``ON CONFLICT``; MySQL and MariaDB: ``ON
DUPLICATE KEY UPDATE``, and for the first a read of the key, then the
insert), each built once per database and run with a dict of values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from inspector_ha.db import results


def insert_once(conn: sa.Connection, table: sa.Table,
                values: dict[str, Any]) -> bool:
    """Insert ``values`` unless a row has its key: whether it was
    inserted (two concurrent inserts: exactly one is; the other's
    transaction fails with IntegrityError on MySQL and MariaDB, which
    read the key first: their ``INSERT IGNORE`` would also turn a data
    error into a warning)."""
    dialect = conn.dialect.name
    if dialect in MYSQL:
        if results.rows(conn, _built(dialect, _key_read, table), values):
            return False
        results.rowcount(conn, _built(dialect, _plain_insert, table),
                          values)
        return True
    return results.rowcount(
        conn, _built(dialect, _insert_or_nothing, table), values) == 1


def replace(conn: sa.Connection, table: sa.Table, values: dict[str, Any],
            keys: Sequence[str]) -> None:
    """Insert ``values``, or overwrite the other columns of the row whose
    ``keys`` columns have these values."""
    dialect = conn.dialect.name
    results.rowcount(conn, _built(dialect, _upsert, table, tuple(keys)),
                      values)


#: SQLAlchemy's names of MySQL and MariaDB (``mysql+pymysql://``,
#: ``mariadb+pymysql://``).
MYSQL = ('mysql', 'mariadb')
#: ``build(dialect, table, keys)``: a statement for one database.
Builder = Callable[[str, sa.Table, tuple[str, ...]], Any]
#: Statements built once per (database, builder, table, key columns).
_BUILT: dict[tuple[str, Builder, str, tuple[str, ...]], Any] = {}


def _built(dialect: str, build: Builder, table: sa.Table,
           keys: tuple[str, ...] = ()) -> Any:
    key = (dialect, build, table.name, keys)
    if key not in _BUILT:
        _BUILT[key] = build(dialect, table, keys)
    return _BUILT[key]


def _key_read(dialect: str, table: sa.Table, keys: tuple[str, ...]) -> Any:
    """Whether a row has the primary key of the values given."""
    return sa.select(sa.literal(1)).where(*(
        column == sa.bindparam(column.key)
        for column in table.primary_key.columns))


def _plain_insert(dialect: str, table: sa.Table,
                  keys: tuple[str, ...]) -> Any:
    return sa.insert(table)


def _insert_or_nothing(dialect: str, table: sa.Table,
                       keys: tuple[str, ...]) -> Any:
    return _module(dialect).insert(table).on_conflict_do_nothing()


def _upsert(dialect: str, table: sa.Table, keys: tuple[str, ...]) -> Any:
    rest = [column.key for column in table.c if column.key not in keys]
    if dialect in MYSQL:
        statement = mysql.insert(table)
        return statement.on_duplicate_key_update(
            {name: statement.inserted[name] for name in rest})
    statement = _module(dialect).insert(table)
    return statement.on_conflict_do_update(
        index_elements=list(keys),
        set_={name: statement.excluded[name] for name in rest})


def _module(dialect: str) -> Any:
    if dialect == 'postgresql':
        return postgresql
    if dialect == 'sqlite':
        return sqlite
    raise NotImplementedError('database %s is not supported' % dialect)
