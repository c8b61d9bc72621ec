"""Reading an ironic-inspector 12.5 database (the source of an import).

Only the columns the import carries are described here, as upstream's
schema head ``b55109d5063a`` has them; nothing is ever written to the
source. JSON columns are read as text and decoded here, whatever the
dialect made of them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:
    from typing import TypeAlias

    #: A row of the source's ``rules`` with its conditions and actions.
    RuleRows: TypeAlias = tuple[sa.Row[Any], list[sa.Row[Any]],
                                list[sa.Row[Any]]]

#: The only upstream schema revision read: ironic-inspector 12.5's head.
REVISION = 'b55109d5063a'

_META = sa.MetaData()
NODES = sa.Table(
    'nodes', _META,
    sa.Column('uuid', sa.String(36)), sa.Column('state', sa.String(16)),
    sa.Column('started_at', sa.DateTime), sa.Column('finished_at',
                                                    sa.DateTime),
    sa.Column('error', sa.Text), sa.Column('manage_boot', sa.Boolean))
ATTRIBUTES = sa.Table(
    'attributes', _META,
    sa.Column('node_uuid', sa.String(36)), sa.Column('name', sa.String(255)),
    sa.Column('value', sa.String(255)))
DATA = sa.Table(
    'introspection_data', _META,
    sa.Column('uuid', sa.String(36)), sa.Column('processed', sa.Boolean),
    sa.Column('data', sa.Text))
RULES = sa.Table(
    'rules', _META,
    sa.Column('uuid', sa.String(36)), sa.Column('created_at', sa.DateTime),
    sa.Column('description', sa.Text), sa.Column('disabled', sa.Boolean),
    sa.Column('scope', sa.String(255)))
CONDITIONS = sa.Table(
    'rule_conditions', _META,
    sa.Column('id', sa.Integer), sa.Column('rule', sa.String(36)),
    sa.Column('op', sa.String(255)), sa.Column('multiple', sa.String(255)),
    sa.Column('invert', sa.Boolean), sa.Column('field', sa.Text),
    sa.Column('params', sa.Text))
ACTIONS = sa.Table(
    'rule_actions', _META,
    sa.Column('id', sa.Integer), sa.Column('rule', sa.String(36)),
    sa.Column('action', sa.String(255)), sa.Column('params', sa.Text))


class WrongSource(Exception):
    """The source is not an ironic-inspector 12.5 database."""


class Source:
    """A read-only connection to an upstream database."""

    def __init__(self, url: str) -> None:
        self.url = url
        _exists(url)
        try:
            self._engine = sa.create_engine(url)
            self._conn = self._engine.connect()
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError,
                sa.exc.OperationalError) as exc:
            raise WrongSource('Cannot open the source database %s: %s' % (
                safe_url(url), exc)) from None

    def close(self) -> None:
        self._conn.close()
        self._engine.dispose()

    def check_revision(self) -> None:
        """:raises WrongSource: not upstream's schema at ``REVISION``."""
        tables = set(sa.inspect(self._conn).get_table_names())
        if 'alembic_version' not in tables or 'nodes' not in tables:
            raise WrongSource(
                'The source %s is not an ironic-inspector database (no '
                'alembic_version or nodes table)' % safe_url(self.url))
        found = [r[0] for r in self._conn.execute(
            sa.text('SELECT version_num FROM alembic_version'))]
        if found != [REVISION]:
            raise WrongSource(
                'The source database is at alembic revision %s; only '
                'ironic-inspector 12.5 databases (revision %s) can be '
                'imported: run ironic-inspector 12.5\'s '
                '`ironic-inspector-dbsync upgrade` on it first' % (
                    ', '.join(found) or 'none', REVISION))

    def nodes(self) -> Sequence[sa.Row[Any]]:
        return self._rows(sa.select(NODES).order_by(NODES.c.uuid))

    def attributes(self, uuids: Iterable[str]) -> Sequence[sa.Row[Any]]:
        query = sa.select(ATTRIBUTES).where(
            ATTRIBUTES.c.node_uuid.in_(uuids),
            ATTRIBUTES.c.value.is_not(None))
        return self._rows(query)

    def data(self, uuids: Iterable[str]) -> list[tuple[str, bool, Any]]:
        """``[(uuid, processed, decoded data)]``; NULL data is skipped."""
        query = sa.select(DATA).where(DATA.c.uuid.in_(uuids),
                                      DATA.c.data.is_not(None))
        return [(r.uuid, bool(r.processed), decode(r.data))
                for r in self._rows(query)]

    def count_data(self) -> int | None:
        return self._conn.scalar(sa.select(sa.func.count()).select_from(
            DATA))

    def rules(self) -> list[RuleRows]:
        """Each rule as a row plus its conditions and actions in order,
        the rules in the order 12.5 lists and applies them."""
        rules = self._rows(sa.select(RULES))
        conditions = _grouped(self._rows(
            sa.select(CONDITIONS).order_by(CONDITIONS.c.id)))
        actions = _grouped(self._rows(
            sa.select(ACTIONS).order_by(ACTIONS.c.id)))
        result = [(r, conditions.get(r.uuid, []), actions.get(r.uuid, []))
                  for r in rules]
        nulls_last = self._engine.dialect.name == 'postgresql'
        return sorted(result, key=lambda item: _upstream_order(
            item, nulls_last))

    def _rows(self, query: sa.Select[Any]) -> Sequence[sa.Row[Any]]:
        return self._conn.execute(query).all()


def decode(value: Any) -> Any:
    """A JSON column's value: text on SQLite and MySQL, and perhaps
    already decoded by the PostgreSQL driver."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode('utf-8')
    if isinstance(value, str):
        return json.loads(value)
    return value


def _upstream_order(item: RuleRows, nulls_last: bool
                    ) -> tuple[Any, tuple[int, int], tuple[int, int]]:
    """12.5 reads rules ``ORDER BY created_at`` with their conditions and
    actions joined (``lazy='joined'``, each ordered by id), so rules whose
    ``created_at`` tie (whole seconds on MySQL) come in the order of their
    first condition's id, then first action's id, a missing one sorting
    as the database sorts NULL (first, but last on PostgreSQL)."""
    rule, conditions, actions = item

    def first(rows: Sequence[sa.Row[Any]]) -> tuple[int, int]:
        if not rows:
            return (1 if nulls_last else -1, 0)
        return (0, rows[0].id)
    return (rule.created_at, first(conditions), first(actions))


def _grouped(rows: Iterable[sa.Row[Any]]
             ) -> dict[str, list[sa.Row[Any]]]:
    result: dict[str, list[sa.Row[Any]]] = {}
    for row in rows:
        result.setdefault(row.rule, []).append(row)
    return result


def _exists(url: str) -> None:
    """A SQLite file is not created by reading it."""
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        raise WrongSource('Invalid database URL %r' % url) from None
    path = parsed.database
    if (parsed.get_backend_name() == 'sqlite' and path and
            path != ':memory:' and not os.path.isfile(path)):
        raise WrongSource('No SQLite database file %s' % path)


def safe_url(url: str) -> str:
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return '<invalid URL>'
