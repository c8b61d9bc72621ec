"""The two writes whose one-statement form differs by database: an insert
that a duplicate key leaves undone, and an insert that replaces the row
of the same key. One statement each instead of a read and a write
(PostgreSQL and SQLite: ``ON CONFLICT``; MySQL and MariaDB: ``ON
DUPLICATE KEY UPDATE``, and for the first a read of the key, then the
insert), each built once per database and run with a dict of values.
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
    inserted (two concurrent inserts: exactly one is; the other's
    transaction fails with IntegrityError on MySQL and MariaDB, which
    read the key first: their ``INSERT IGNORE`` would also turn a data
    error into a warning)."""
    statement = _built(session, 'insert_once', table, ())
    if _dialect(session) in MYSQL:
        if session.execute(statement[0], values).first() is not None:
            return False
        session.execute(statement[1], values)
        return True
    result = cast('sa.CursorResult[Any]', session.execute(statement, values))
    return result.rowcount == 1


def replace(session: orm.Session, table: sa.Table, values: dict[str, Any],
            keys: Sequence[str]) -> None:
    """Insert ``values``, or overwrite the other columns of the row whose
    ``keys`` columns have these values."""
    session.execute(_built(session, 'replace', table, tuple(keys)), values)


#: Statements built once per (database, form, table, key columns).
_BUILT: dict[tuple[str, str, str, tuple[str, ...]], Any] = {}


def _built(session: orm.Session, form: str, table: sa.Table,
           keys: tuple[str, ...]) -> Any:
    dialect = _dialect(session)
    key = (dialect, form, table.name, keys)
    if key not in _BUILT:
        _BUILT[key] = (_insert_once if form == 'insert_once' else
                       _replace)(dialect, table, keys)
    return _BUILT[key]


def _insert_once(dialect: str, table: sa.Table,
                 keys: tuple[str, ...]) -> Any:
    if dialect in MYSQL:
        return (sa.select(sa.literal(1)).where(*(
            column == sa.bindparam(column.key)
            for column in table.primary_key.columns)), sa.insert(table))
    return _module(dialect).insert(table).on_conflict_do_nothing()


def _replace(dialect: str, table: sa.Table, keys: tuple[str, ...]) -> Any:
    rest = [column.key for column in table.c if column.key not in keys]
    if dialect in MYSQL:
        statement = mysql.insert(table)
        return statement.on_duplicate_key_update(
            {name: statement.inserted[name] for name in rest})
    statement = _module(dialect).insert(table)
    return statement.on_conflict_do_update(
        index_elements=list(keys),
        set_={name: statement.excluded[name] for name in rest})


#: SQLAlchemy's names of MySQL and MariaDB (``mysql+pymysql://``,
#: ``mariadb+pymysql://``).
MYSQL = ('mysql', 'mariadb')


def _dialect(session: orm.Session) -> str:
    return session.get_bind().dialect.name


def _module(dialect: str) -> Any:
    if dialect == 'postgresql':
        return postgresql
    if dialect == 'sqlite':
        return sqlite
    raise NotImplementedError('database %s is not supported' % dialect)
