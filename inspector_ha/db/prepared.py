"""The hot statements, compiled once per database and run on the driver.

``Connection.execute`` of a statement built once still costs SQLAlchemy
about 0.07 ms of CPU inside the service on top of the driver's work (its
cache lookup, execution context, result metadata and row objects; a read
by key cost 0.0164 ms alone, 0.0065 ms this way). An introspection runs
about 48 statements. Here a statement is compiled once per (database,
shape of the values given) through SQLAlchemy's public compiler API, and
each run only binds, calls the driver's cursor and converts the columns.

What is kept from ``Connection.execute``: each bound value goes through
its type's bind processor and each column through its result processor
(a timestamp is the same ``datetime`` either way); a driver error is
handed to the connection's own error handling, so it is raised as the
same SQLAlchemy exception, and a lost connection is marked invalidated
as before (the store then drops the connections of its age, and
``Store.transaction`` retries on the same exceptions); a
connection not yet in a transaction begins one, as autobegin would.
Parity is tested on SQLite, PostgreSQL and MariaDB
(``tests/functional/test_prepared_parity.py``).

Only single executions go this way; a list of rows (an executemany) goes
through ``Connection.execute``, which batches it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import sqlalchemy as sa
from sqlalchemy.sql import dml
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement

#: A bound value's or a column's processor, None when there is none.
Processor = Callable[[Any], Any] | None


class _Bind(NamedTuple):
    """Where a bound value comes from: ``params[key]`` (its ``item``th
    element when an IN list was expanded) or a value fixed in the
    statement (``key`` None), and its processor."""

    key: str | None
    item: int | None
    fixed: Any
    process: Processor


class _Plan(NamedTuple):
    """A statement compiled for one database and one shape of values."""

    statement: ClauseElement
    sql: str
    binds: tuple[tuple[str, _Bind], ...]
    positional: bool
    keys: tuple[str, ...]
    results: tuple[Processor, ...]


#: Plans by (statement, dialect class, server version, shape of values).
_PLANS: dict[tuple[Any, ...], _Plan] = {}


def rowcount(conn: sa.Connection, statement: ClauseElement,
             params: Mapping[str, Any]) -> int:
    """Run a write; the rows it matched."""
    return int(_execute(conn, statement, params, _rowcount)[1])


def rows(conn: sa.Connection, statement: ClauseElement,
         params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Run a read (or a write with RETURNING); every row, as tuples."""
    plan, fetched = _execute(conn, statement, params, _all)
    return [_convert(plan.results, row) for row in fetched]


def mappings(conn: sa.Connection, statement: ClauseElement,
             params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Run a read; every row, as dicts of column keys."""
    plan, fetched = _execute(conn, statement, params, _all)
    return [dict(zip(plan.keys, _convert(plan.results, row)))
            for row in fetched]


def first(conn: sa.Connection, statement: ClauseElement,
          params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The first row as a dict of column keys, or None."""
    plan, row = _execute(conn, statement, params, _one)
    if row is None:
        return None
    return dict(zip(plan.keys, _convert(plan.results, row)))


def scalar(conn: sa.Connection, statement: ClauseElement,
           params: Mapping[str, Any]) -> Any:
    """The first column of the first row, or None (the other rows are
    not fetched)."""
    plan, row = _execute(conn, statement, params, _one)
    return None if row is None else _convert(plan.results, row)[0]


def _rowcount(cursor: Any) -> Any:
    return cursor.rowcount


def _all(cursor: Any) -> Any:
    return cursor.fetchall()


def _one(cursor: Any) -> Any:
    return cursor.fetchone()


def _convert(results: Sequence[Processor],
             row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(value if process is None or value is None
                 else process(value)
                 for process, value in zip(results, row))


def _execute(conn: sa.Connection, statement: ClauseElement,
             params: Mapping[str, Any],
             fetch: Callable[[Any], Any]) -> tuple[_Plan, Any]:
    """Bind, execute and fetch; any error on the way goes to the
    connection's own handler: the same exception as ``execute`` raises
    (a bad value a ``StatementError``), and on a lost connection the
    connection invalidated."""
    if not conn.in_transaction():
        conn.begin()
    plan = _plan(conn, statement, params)
    args = cursor = None
    try:
        args = _args(plan, params)
        cursor = conn.connection.cursor()
        cursor.execute(plan.sql, args)
        return plan, fetch(cursor)
    except BaseException as error:
        conn._handle_dbapi_exception(error, plan.sql, args, cursor, None)
    finally:
        if cursor is not None:
            cursor.close()


def _args(plan: _Plan, params: Mapping[str, Any]) -> Any:
    values = []
    for _name, bind in plan.binds:
        if bind.key is None:
            value = bind.fixed
        elif bind.item is None:
            value = params[bind.key]
        else:
            value = params[bind.key][bind.item]
        if bind.process is not None:
            value = bind.process(value)
        values.append(value)
    if plan.positional:
        return tuple(values)
    return {name: value for (name, _bind), value in zip(plan.binds, values)}


def _plan(conn: sa.Connection, statement: ClauseElement,
          params: Mapping[str, Any]) -> _Plan:
    dialect = conn.dialect
    shape = tuple((key, len(value)) if isinstance(value, (list, tuple))
                  else key for key, value in params.items())
    # NOTE: the SQL differs by server too (MySQL 8 and MariaDB upserts).
    key = (id(statement), type(dialect), dialect.server_version_info,
           shape)
    plan = _PLANS.get(key)
    # NOTE: a statement is expected to be built once (a module constant);
    # the identity check keeps another one at a reused id from a plan.
    if plan is None or plan.statement is not statement:
        plan = _PLANS[key] = _compile(dialect, statement, params)
    return plan


class Unsupported(Exception):
    """A statement this module cannot run as ``execute`` would."""


def _compile(dialect: sa.Dialect, statement: ClauseElement,
             params: Mapping[str, Any]) -> _Plan:
    columns = list(params) if isinstance(statement, dml.ValuesBase) \
        else None
    compiled = cast(SQLCompiler, statement.compile(dialect=dialect,
                                                   column_keys=columns))
    if compiled.insert_prefetch or compiled.update_prefetch or \
            compiled.escaped_bind_names:
        raise Unsupported('%s: Python-side column defaults or escaped '
                          'parameter names' % compiled.string)
    expanded = compiled.construct_expanded_state(dict(params))
    names = (expanded.positiontup if expanded.positiontup is not None
             else list(expanded.parameters))
    # NOTE: as DefaultExecutionContext merges them: the expanded state
    # holds the processors of the expanded IN elements only.
    processors = dict(compiled._bind_processors)
    processors.update(expanded.processors)
    expanded_from = {name: (key, index)
                     for key, parts in expanded.parameter_expansion.items()
                     for index, name in enumerate(parts)}
    binds = tuple((name, _bind(name, params, expanded.parameters,
                               expanded_from, compiled.binds,
                               processors.get(name)))
                  for name in names)
    exported = list(getattr(statement, 'exported_columns', ()))
    return _Plan(
        statement=statement, sql=expanded.statement, binds=binds,
        positional=expanded.positiontup is not None,
        keys=tuple(column.key for column in exported),
        results=tuple(column.type.dialect_impl(dialect).result_processor(
            dialect, None) for column in exported))


def _bind(name: str, params: Mapping[str, Any],
          expanded: Mapping[str, Any],
          expanded_from: Mapping[str, tuple[str, int]],
          declared: Mapping[str, Any], process: Any) -> _Bind:
    if name in expanded_from:
        key, index = expanded_from[name]
        return _Bind(key, index, None, process)
    if name in params:
        return _Bind(name, None, None, process)
    bindparam = declared.get(name)
    if bindparam is not None and bindparam.key in params:
        return _Bind(bindparam.key, None, None, process)
    if bindparam is None or bindparam.required or bindparam.callable:
        raise Unsupported('no value for bound parameter %r' % name)
    return _Bind(None, None, expanded[name], process)
