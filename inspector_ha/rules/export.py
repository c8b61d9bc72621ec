"""Introspection rules in Ironic's own form: inspection rules (API 1.96),
for a site moving on to Ironic's built-in inspection.

A rule either converts whole or not at all: :func:`convert` raises
:class:`Unconvertible` with the reason, and the caller lists it (a rule
half-converted would act on other nodes than the original).

What Ironic 39 does differently, and how each difference is met:

* its arguments are Python format strings over ``node``, ``inventory``
  and ``plugin_data``: a field becomes a placeholder
  (``data://inventory.cpu.count`` -> ``{inventory[cpu][count]}``) and a
  literal's braces are doubled;
* a placeholder always gives text, so ``eq`` compares text (an integer
  or text value converts; a float does not) and ``lt``, ``gt``, ``le``,
  ``ge`` cannot be converted ('10' < '9');
* ``set-capability`` appends a duplicate there: it is preceded by
  ``unset-capability``; without a value it becomes ``unset-capability``;
* there is no scope: a scoped rule gets a condition on
  ``properties/inspection_scope``;
* conditions cannot iterate over a list in the data: a field with ``*``
  (or a slice or filter) cannot be converted;
* rules run by priority, highest first: the oldest rule gets the highest,
  as upstream runs them oldest first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import jsonpath_rw

from inspector_ha.rules import engine
from inspector_ha.rules import paths

#: Ironic's API version that has inspection rules.
API_VERSION = '1.96'
#: Node fields named alike by openstacksdk (``node://``) and Ironic.
NODE_FIELDS = frozenset([
    'name', 'uuid', 'driver', 'driver_info', 'extra', 'properties',
    'instance_info', 'resource_class', 'conductor_group', 'owner',
    'lessee', 'description', 'power_state', 'provision_state'])
#: A key a format string can hold in ``[...]``.
_KEY = re.compile(r'^[^\[\]{}.:!]+$')
#: ``{data[inventory]...`` and ``{data[...`` of an upstream action value.
_DATA_INVENTORY = '{data[inventory]'
_DATA = '{data['


class Unconvertible(ValueError):
    """A rule Ironic's inspection rules cannot express; the message says
    why."""


def convert_all(rules: Sequence[Mapping[str, Any]]
                ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``(converted rules, {uuid: why not} of the others)``; ``rules``
    oldest first, as upstream applies them."""
    converted, refused = [], {}
    for index, rule in enumerate(rules):
        try:
            converted.append(convert(rule, priority=len(rules) - index))
        except Unconvertible as exc:
            refused[rule['uuid']] = str(exc)
    return converted, refused


def convert(rule: Mapping[str, Any], priority: int) -> dict[str, Any]:
    """The Ironic inspection rule of ``rule`` (as the API shows it)."""
    conditions = [condition(c) for c in rule['conditions']]
    if rule.get('scope'):
        conditions.insert(0, {'op': 'eq', 'args': {'values': [
            '{node.properties[%s]}' % engine.SCOPE_PROPERTY,
            literal(rule['scope'])]}})
    actions = [converted for a in rule['actions'] for converted in action(a)]
    return {'uuid': rule['uuid'],
            'description': rule.get('description') or rule['uuid'],
            'priority': priority, 'phase': 'main', 'sensitive': False,
            'conditions': conditions, 'actions': actions}


def condition(cond: Mapping[str, Any]) -> dict[str, Any]:
    """One condition in Ironic's form."""
    op, expected, field = cond['op'], cond.get('value'), cond['field']
    inverted = bool(cond.get('invert'))
    if op in ('lt', 'gt', 'le', 'ge'):
        raise Unconvertible(
            "condition %s: Ironic's %s compares the field as text, not as "
            "a number ('10' < '9')" % (op, op.rstrip('e')))
    if op in ('eq', 'ne'):
        if isinstance(expected, float) or not isinstance(expected,
                                                         (str, int)):
            raise Unconvertible(
                'condition %s: Ironic compares the field as text, so only '
                'a text or integer value converts, not %r' % (op, expected))
        args: dict[str, Any] = {'values': [placeholder(field),
                                           literal(str(expected))]}
        inverted ^= op == 'ne'
        op = 'eq'
    elif op == 'is-empty':
        args = {'value': placeholder(field)}
    elif op == 'in-net':
        args = {'address': placeholder(field),
                'subnet': literal(expected)}
    elif op in ('matches', 'contains'):
        # NOTE: Ironic's matches adds the '$' as upstream's does.
        args = {'value': placeholder(field), 'regex': str(expected)}
    else:
        raise Unconvertible('condition %s: Ironic has no such operator' % op)
    return {'op': '!' + op if inverted else op, 'args': args}


def action(act: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One action as Ironic's actions (one or two)."""
    name = act['action']
    params = {k: v for k, v in act.items() if k != 'action'}
    if name == 'set-capability':
        unset = {'op': 'unset-capability', 'args': {'name': params['name']}}
        if params.get('value') is None:
            return [unset]
        return [unset, {'op': 'set-capability', 'args': {
            'name': params['name'], 'value': str(value(params['value']))}}]
    if name == 'set-attribute':
        if params['path'].strip('/') == 'driver':
            raise Unconvertible("set-attribute of /driver: Ironic's does not "
                                'reset the hardware interfaces')
        return [{'op': 'set-attribute', 'args': {
            'path': params['path'], 'value': value(params['value'])}}]
    if name == 'extend-attribute':
        return [{'op': 'extend-attribute', 'args': {
            'path': params['path'], 'value': value(params['value']),
            'unique': bool(params.get('unique', False))}}]
    if name in ('add-trait', 'remove-trait'):
        return [{'op': name, 'args': {'name': params['name']}}]
    if name == 'fail':
        return [{'op': 'fail', 'args': {'msg': params['message']}}]
    if name == 'example':
        return [{'op': 'log', 'args': {'msg': literal(
            'example action: %s' % params)}}]
    raise Unconvertible('action %s: Ironic has no such action' % name)


def placeholder(field: str) -> str:
    """The format placeholder of a condition field."""
    scheme, path = paths.split(field)
    keys = _keys(field, jsonpath_rw.parse(path))
    if scheme == paths.NODE:
        if keys[0] not in NODE_FIELDS:
            raise Unconvertible('field %s: not a node field of the same '
                                'name in Ironic' % field)
        return '{node.%s%s}' % (keys[0], _index(keys[1:]))
    if keys[0] == 'inventory':
        return '{inventory%s}' % _index(keys[1:])
    return '{plugin_data%s}' % _index(keys)


def _keys(field: str, expr: Any) -> list[str]:
    """The keys of a path of plain names and indexes."""
    if isinstance(expr, jsonpath_rw.Child):
        return _keys(field, expr.left) + _keys(field, expr.right)
    if isinstance(expr, jsonpath_rw.Fields) and len(expr.fields) == 1 and (
            _KEY.match(expr.fields[0]) and not expr.fields[0].isdigit()):
        return [expr.fields[0]]
    if isinstance(expr, jsonpath_rw.Index):
        return [str(expr.index)]
    raise Unconvertible('field %s: Ironic formats one value, and %s is no '
                        'plain name or index' % (field, expr))


def _index(keys: Sequence[str]) -> str:
    return ''.join('[%s]' % key for key in keys)


def literal(text: Any) -> Any:
    """A constant as a format string keeps it."""
    if isinstance(text, str):
        return text.replace('{', '{{').replace('}', '}}')
    return text


def value(val: Any) -> Any:
    """An action value: upstream's ``{data[...]}`` as Ironic's
    ``{inventory[...]}`` or ``{plugin_data[...]}``, into dicts and
    lists."""
    if isinstance(val, dict):
        return {value(k): value(v) for k, v in val.items()}
    if isinstance(val, list):
        return [value(v) for v in val]
    if not isinstance(val, str):
        return val
    converted = val.replace(_DATA_INVENTORY, '{inventory').replace(
        _DATA, '{plugin_data[')
    if '{data' in converted:
        raise Unconvertible('value %s: Ironic formats inventory[...] and '
                            'plugin_data[...], not the whole data' % val)
    return converted
