"""Introspection rules: tables and repository functions.

A rule is handed around as a plain dict, the full representation of the
API without links: ``{uuid, description, scope, conditions, actions}``.
Conditions are ``{op, field, multiple, invert, **params}`` and actions
``{action, **params}``, in the order they were given.
"""

import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import sqlalchemy as sa
from sqlalchemy import (Boolean, ForeignKey, Index, Integer, String, Text,
                        exc)
from sqlalchemy.orm import Mapped, Session, mapped_column

from inspector_ha.common import timeutils
from inspector_ha.db import models


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


def create(session: Session, rule: dict[str, Any]) -> dict[str, Any]:
    """Insert a validated rule dict.

    :raises Duplicate: a rule with this UUID exists.
    """
    if session.get(Rule, rule['uuid']) is not None:
        raise Duplicate(rule['uuid'])
    session.add(Rule(uuid=rule['uuid'], description=rule['description'],
                     scope=rule['scope'], disabled=False,
                     created_at=timeutils.utcnow()))
    try:
        session.flush()
    except exc.IntegrityError:
        raise Duplicate(rule['uuid']) from None
    session.add_all(_children(rule))
    return get(session, rule['uuid'])


def _children(rule: dict[str, Any]) -> list[RuleCondition | RuleAction]:
    conditions = [RuleCondition(
        rule=rule['uuid'], op=c['op'], field=c['field'],
        multiple=c['multiple'], invert=c['invert'],
        params=json.dumps(_params(c, CONDITION_KEYS)))
        for c in rule['conditions']]
    actions = [RuleAction(rule=rule['uuid'], action=a['action'],
                          params=json.dumps(_params(a, ACTION_KEYS)))
               for a in rule['actions']]
    return conditions + actions


def _params(item: Mapping[str, Any],
            keys: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in keys}


def get(session: Session, uuid: str) -> dict[str, Any]:
    """:raises NotFound:"""
    rules = _load(session, sa.select(Rule).where(Rule.uuid == uuid))
    if not rules:
        raise NotFound(uuid)
    return rules[0]


def list_all(session: Session) -> list[dict[str, Any]]:
    """Every rule, oldest first (the order they are evaluated in)."""
    return _load(session, sa.select(Rule).order_by(Rule.created_at,
                                                   Rule.uuid))


def _load(session: Session,
          query: sa.Select[Rule]) -> list[dict[str, Any]]:
    rows = list(session.scalars(query))
    uuids = [r.uuid for r in rows]
    conditions = _by_rule(session, RuleCondition, uuids)
    actions = _by_rule(session, RuleAction, uuids)
    return [_as_dict(r, conditions.get(r.uuid, []), actions.get(r.uuid, []))
            for r in rows]


_Child = TypeVar('_Child', RuleCondition, RuleAction)


def _by_rule(session: Session, table: type[_Child],
             uuids: list[str]) -> dict[str, list[_Child]]:
    result: dict[str, list[_Child]] = {}
    if uuids:
        query = sa.select(table).where(table.rule.in_(uuids)).order_by(
            table.id)
        for row in session.scalars(query):
            result.setdefault(row.rule, []).append(row)
    return result


def _as_dict(rule: Rule, conditions: Iterable[RuleCondition],
             actions: Iterable[RuleAction]) -> dict[str, Any]:
    return {'uuid': rule.uuid, 'description': rule.description,
            'scope': rule.scope,
            'conditions': [dict(json.loads(c.params), op=c.op, field=c.field,
                                multiple=c.multiple, invert=c.invert)
                           for c in conditions],
            'actions': [dict(json.loads(a.params), action=a.action)
                        for a in actions]}


def delete(session: Session, uuid: str) -> None:
    """:raises NotFound:"""
    _delete_children(session, [uuid])
    result = cast('sa.CursorResult[Any]', session.execute(
        sa.delete(Rule).where(Rule.uuid == uuid)))
    if result.rowcount != 1:
        raise NotFound(uuid)


def delete_all(session: Session) -> None:
    _delete_children(session, None)
    session.execute(sa.delete(Rule))


def _delete_children(session: Session, uuids: list[str] | None) -> None:
    # NOTE: the foreign keys cascade too; deleting the children first does
    # not depend on SQLite's foreign_keys pragma.
    for table in (RuleCondition, RuleAction):
        query = sa.delete(table)
        if uuids is not None:
            query = query.where(table.rule.in_(uuids))
        session.execute(query)
