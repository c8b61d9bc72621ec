"""Validation of a rule as ``POST /v1/rules`` receives it.

The checks and their texts follow upstream: the API's UUID and scope
checks, then the JSON schemas of conditions and actions (reported as
``Validation failed for ...: <first problem>``), then each condition's
field and each plugin's parameters.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oslo_utils import uuidutils

from inspector_ha.db import rules as rules_db
from inspector_ha.rules import paths
from inspector_ha.rules.plugins import InvalidRule

if TYPE_CHECKING:
    from inspector_ha.rules.plugins import Plugins
    from inspector_ha.rules.plugins import WithValidation

MULTIPLE = ['all', 'any', 'first']
MAX_SCOPE = 255


def validate(body: Any, plugins: Plugins) -> dict[str, Any]:
    """The rule dict to store (defaults filled in) from a request body.

    :param plugins: a :class:`~inspector_ha.rules.plugins.Plugins`.
    :raises InvalidRule:
    """
    if not isinstance(body, dict):
        raise InvalidRule('Invalid data: expected a JSON object, got %s' %
                          type(body).__name__)
    rule: dict[str, Any] = {
        'uuid': _uuid(body.get('uuid')),
        'description': _text('description', body.get('description')),
        'scope': _scope(body.get('scope'))}
    conditions = body.get('conditions', [])
    actions = body.get('actions', [])
    _schema('conditions', _conditions_problem(conditions, plugins))
    _schema('actions', _actions_problem(actions, plugins))
    rule['conditions'] = [_condition(c, plugins) for c in conditions]
    rule['actions'] = [_action(a, plugins) for a in actions]
    return rule


def canonical_uuid(value: str) -> str:
    """A UUID-like string in its canonical form (others unchanged)."""
    if not uuidutils.is_uuid_like(value):
        return value
    return str(uuidlib.UUID(value))


def _uuid(value: Any) -> str:
    if not value:
        return str(uuidlib.uuid4())
    if not uuidutils.is_uuid_like(value):
        raise InvalidRule('Invalid UUID value')
    return canonical_uuid(value)


def _text(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidRule("Invalid data: '%s' must be a string, got %r" %
                          (name, value))
    return value


def _scope(value: Any) -> str | None:
    value = _text('scope', value)
    if value and len(value) > MAX_SCOPE:
        raise InvalidRule("Invalid data: the length of the 'scope' "
                          "attribute must not exceed %d characters, got %d"
                          % (MAX_SCOPE, len(value)))
    return value


def _schema(what: str, problem: str | None) -> None:
    if problem:
        raise InvalidRule('Validation failed for %s: %s' % (what, problem))


def _conditions_problem(conditions: Any, plugins: Plugins) -> str | None:
    if not isinstance(conditions, list):
        return "%r is not of type 'array'" % (conditions,)
    for item in conditions:
        problem = (_object_problem(item, ('op', 'field'))
                   or _enum_problem(item['op'], plugins.condition_names)
                   or _type_problem(item['field'], str, 'string')
                   or _optional_problems(item))
        if problem:
            return problem
    return None


def _optional_problems(condition: Mapping[str, Any]) -> str | None:
    if 'multiple' in condition:
        problem = _enum_problem(condition['multiple'], MULTIPLE)
        if problem:
            return problem
    if 'invert' in condition:
        return _type_problem(condition['invert'], bool, 'boolean')
    return None


def _actions_problem(actions: Any, plugins: Plugins) -> str | None:
    if not isinstance(actions, list):
        return "%r is not of type 'array'" % (actions,)
    if not actions:
        return '[] should be non-empty'
    for item in actions:
        problem = (_object_problem(item, ('action',))
                   or _enum_problem(item['action'], plugins.action_names))
        if problem:
            return problem
    return None


def _object_problem(item: Any, required: Iterable[str]) -> str | None:
    if not isinstance(item, dict):
        return "%r is not of type 'object'" % (item,)
    for key in required:
        if key not in item:
            return '%r is a required property' % key
    return None


def _enum_problem(value: Any, names: Sequence[str]) -> str | None:
    if value not in names:
        return '%r is not one of %r' % (value, names)
    return None


def _type_problem(value: Any, cls: type, name: str) -> str | None:
    if not isinstance(value, cls):
        return '%r is not of type %r' % (value, name)
    return None


def _condition(condition: Mapping[str, Any],
               plugins: Plugins) -> dict[str, Any]:
    try:
        paths.validate(condition['field'])
    except ValueError as exc:
        raise InvalidRule(str(exc)) from None
    params = {k: v for k, v in condition.items()
              if k not in rules_db.CONDITION_KEYS}
    _plugin_params(plugins.condition(condition['op']), params,
                   'operator', condition['op'])
    return dict(params, op=condition['op'], field=condition['field'],
                multiple=condition.get('multiple', 'any'),
                invert=condition.get('invert', False))


def _action(action: Mapping[str, Any],
            plugins: Plugins) -> dict[str, Any]:
    params = {k: v for k, v in action.items()
              if k not in rules_db.ACTION_KEYS}
    _plugin_params(plugins.action(action['action']), params, 'action',
                   action['action'])
    return dict(params, action=action['action'])


def _plugin_params(plugin: WithValidation, params: dict[str, Any],
                   kind: str, name: str) -> None:
    try:
        plugin.validate(params)
    except ValueError as exc:
        raise InvalidRule('Invalid parameters for %s %s: %s' %
                          (kind, name, exc)) from None
