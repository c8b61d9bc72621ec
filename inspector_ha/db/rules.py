"""Introspection rules: tables and repository functions.

A rule is handed around as a plain dict, the full representation of the
API without links: ``{uuid, description, scope, conditions, actions}``.
Conditions are ``{op, field, multiple, invert, **params}`` and actions
``{action, **params}``, in the order they were given.
"""

import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import (Boolean, ForeignKey, Index, Integer, String, Text,
                        exc)
from sqlalchemy.orm import Mapped, mapped_column

from inspector_ha.common import timeutils
from inspector_ha.db import models
from inspector_ha.db import results


#: The keys of a condition or action that are not plugin parameters.
CONDITION_KEYS = ('op', 'field', 'multiple', 'invert')
ACTION_KEYS = ('action',)


class NotFound(Exception):
    def __init__(self, uuid: str) -> None:
        super().__init__('Rule %s was not found' % uuid)


class Duplicate(Exception):
    def __init__(self, uuid: str) -> None:
        super().__init__('Rule with UUID %s already exists' % uuid)


class Rule(models.Base):
    __tablename__ = 'rules'
    uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    created_at: Mapped[datetime.datetime] = mapped_column(
        models.Timestamp, nullable=False)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    disabled: Mapped[bool] = mapped_column(Boolean, nullable=False,
                                           default=False)
    scope: Mapped[str | None] = mapped_column(String(255), nullable=True)
    __table_args__ = (Index('rules_created_idx', 'created_at'),)


class RuleCondition(models.Base):
    __tablename__ = 'rule_conditions'
    id: Mapped[int] = mapped_column(Integer, primary_key=True,
                                    autoincrement=True)
    rule: Mapped[str] = mapped_column(
        String(36), ForeignKey('rules.uuid', ondelete='CASCADE'),
        nullable=False)
    op: Mapped[str] = mapped_column(String(255), nullable=False)
    multiple: Mapped[str] = mapped_column(String(255), nullable=False)
    invert: Mapped[bool] = mapped_column(Boolean, nullable=False,
                                         default=False)
    field: Mapped[str] = mapped_column(Text, nullable=False)
    params: Mapped[str] = mapped_column(models.LongText, nullable=False)
    __table_args__ = (Index('rule_conditions_rule_idx', 'rule'),)


class RuleAction(models.Base):
    __tablename__ = 'rule_actions'
    id: Mapped[int] = mapped_column(Integer, primary_key=True,
                                    autoincrement=True)
    rule: Mapped[str] = mapped_column(
        String(36), ForeignKey('rules.uuid', ondelete='CASCADE'),
        nullable=False)
    action: Mapped[str] = mapped_column(String(255), nullable=False)
    params: Mapped[str] = mapped_column(models.LongText, nullable=False)
    __table_args__ = (Index('rule_actions_rule_idx', 'rule'),)


RULES = cast(sa.Table, Rule.__table__)
CONDITIONS = cast(sa.Table, RuleCondition.__table__)
ACTIONS = cast(sa.Table, RuleAction.__table__)
#: Every rule, oldest first (the order they are evaluated in); read at
#: each processing.
EVERY_RULE = sa.select(RULES).order_by(RULES.c.created_at, RULES.c.uuid)


def _children_of(table: sa.Table) -> sa.Select[Any]:
    """The rows of ``table`` of the rules in ``b_rules``, by id (the
    order each rule's conditions or actions were given in)."""
    return sa.select(table).where(table.c.rule.in_(
        sa.bindparam('b_rules', expanding=True))).order_by(table.c.id)


#: The conditions, and the actions, of the rules in ``b_rules``.
CHILDREN = {table.name: _children_of(table) for table in (CONDITIONS, ACTIONS)}


def create(conn: sa.Connection, rule: dict[str, Any]) -> dict[str, Any]:
    """Insert a validated rule dict.

    :raises Duplicate: a rule with this UUID exists.
    """
    exists = sa.select(RULES.c.uuid).where(RULES.c.uuid == rule['uuid'])
    if conn.scalar(exists) is not None:
        raise Duplicate(rule['uuid'])
    try:
        conn.execute(sa.insert(RULES).values(
            uuid=rule['uuid'], description=rule['description'],
            scope=rule['scope'], disabled=False,
            created_at=timeutils.utcnow()))
    except exc.IntegrityError:
        raise Duplicate(rule['uuid']) from None
    insert_children(conn, *_children(rule))
    return get(conn, rule['uuid'])


def insert_children(conn: sa.Connection, conditions: list[dict[str, Any]],
                    actions: list[dict[str, Any]]) -> None:
    """Insert a rule's condition rows and action rows, in order."""
    for table, rows in ((CONDITIONS, conditions), (ACTIONS, actions)):
        if rows:
            conn.execute(sa.insert(table), rows)


def _children(rule: dict[str, Any]) -> tuple[list[dict[str, Any]],
                                             list[dict[str, Any]]]:
    """The rows of the rule's conditions and of its actions."""
    conditions = [dict(
        rule=rule['uuid'], op=c['op'], field=c['field'],
        multiple=c['multiple'], invert=c['invert'],
        params=json.dumps(_params(c, CONDITION_KEYS)))
        for c in rule['conditions']]
    actions = [dict(rule=rule['uuid'], action=a['action'],
                    params=json.dumps(_params(a, ACTION_KEYS)))
               for a in rule['actions']]
    return conditions, actions


def _params(item: Mapping[str, Any],
            keys: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in keys}


def get(conn: sa.Connection, uuid: str) -> dict[str, Any]:
    """:raises NotFound:"""
    rules = _load(conn, [row._mapping for row in conn.execute(
        sa.select(RULES).where(RULES.c.uuid == uuid))])
    if not rules:
        raise NotFound(uuid)
    return rules[0]


def list_all(conn: sa.Connection) -> list[dict[str, Any]]:
    """Every rule, oldest first (the order they are evaluated in)."""
    return _load(conn, results.mappings(conn, EVERY_RULE, {}))


def _load(conn: sa.Connection,
          rows: Sequence[Mapping[Any, Any]]) -> list[dict[str, Any]]:
    """The rules of ``rows`` (the columns of :data:`RULES` by name)
    with their conditions and actions."""
    uuids = [r['uuid'] for r in rows]
    conditions = _by_rule(conn, CONDITIONS, uuids)
    actions = _by_rule(conn, ACTIONS, uuids)
    return [_as_dict(r, conditions.get(r['uuid'], []),
                     actions.get(r['uuid'], [])) for r in rows]


def _by_rule(conn: sa.Connection, table: sa.Table,
             uuids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``table`` (by column name) of each rule of ``uuids``."""
    result: dict[str, list[dict[str, Any]]] = {}
    if uuids:
        for child in results.mappings(conn, CHILDREN[table.name],
                                       {'b_rules': uuids}):
            result.setdefault(child['rule'], []).append(child)
    return result


def _as_dict(rule: Mapping[Any, Any],
             conditions: Iterable[Mapping[str, Any]],
             actions: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {'uuid': rule['uuid'], 'description': rule['description'],
            'scope': rule['scope'],
            'conditions': [dict(json.loads(c['params']), op=c['op'],
                                field=c['field'], multiple=c['multiple'],
                                invert=c['invert'])
                           for c in conditions],
            'actions': [dict(json.loads(a['params']), action=a['action'])
                        for a in actions]}


def delete(conn: sa.Connection, uuid: str) -> None:
    """:raises NotFound:"""
    _delete_children(conn, [uuid])
    result = cast('sa.CursorResult[Any]', conn.execute(
        sa.delete(RULES).where(RULES.c.uuid == uuid)))
    if result.rowcount != 1:
        raise NotFound(uuid)


def delete_all(conn: sa.Connection) -> None:
    _delete_children(conn, None)
    conn.execute(sa.delete(RULES))


def _delete_children(conn: sa.Connection, uuids: list[str] | None) -> None:
    # NOTE: the foreign keys cascade too; deleting the children first does
    # not depend on SQLite's foreign_keys pragma.
    for table in (CONDITIONS, ACTIONS):
        query = sa.delete(table)
        if uuids is not None:
            query = query.where(table.c.rule.in_(uuids))
        conn.execute(query)
