"""Introspection rules: validation and application to one node.

Upstream's ``rules.apply``: every rule, oldest first, is checked (scope,
then every condition); then the actions of all matching rules run in that
order. Here the actions only collect changes on a
:class:`~inspector_ha.processing.target.NodeTarget`; they reach Ironic
together with the processing hooks' changes, so a rule that fails leaves
the node untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inspector_ha.db import rules as rules_db
from inspector_ha.processing import base
from inspector_ha.rules import paths
from inspector_ha.rules import plugins as plugins_mod
from inspector_ha.rules import schema
from inspector_ha.processing import target as target_mod

if TYPE_CHECKING:
    from inspector_ha.rules import conditions

LOG = logging.getLogger(__name__)
SCOPE_PROPERTY = 'inspection_scope'

validate = schema.validate


def apply(rules: Sequence[Mapping[str, Any]], context: base.NodeContext,
          data: dict[str, Any]) -> None:
    """Apply ``rules`` (every rule, as ``rules_db.list_all`` reads them,
    in the transaction of the processing's other reads) to the node of
    ``context`` (a processing ``NodeContext``) and the processed
    ``data``: the changes (patches, traits, interface reset) join those
    ``context`` collected.

    :raises HookError: a ``fail`` action, or a rule that cannot be run.
    """
    if not rules:
        return
    target = target_mod.NodeTarget(
        context.uuid, target_mod.node_dict(context.node), context.patches)
    run(rules, target, data, plugins_mod.Plugins())
    context.patches.extend(target.patches)
    context.traits.extend(target.traits)
    context.reset_interfaces = (context.reset_interfaces or
                                target.reset_interfaces)


def run(rules: Sequence[Mapping[str, Any]], target: target_mod.NodeTarget,
        data: dict[str, Any], plugins: plugins_mod.Plugins
        ) -> list[Mapping[str, Any]]:
    """Check ``rules`` against the node and data, then run the actions of
    those that match on ``target``; returns the matching rules."""
    sources: dict[str, Any] = {paths.DATA: data, paths.NODE: target.view}
    matching = [rule for rule in rules
                if in_scope(rule, target.properties)
                and matches(rule, sources, plugins)]
    for rule in matching:
        LOG.info('Applying rule %s to node %s', _name(rule), target.uuid)
        run_actions(rule, target, data, plugins)
    return matching


def in_scope(rule: Mapping[str, Any], properties: Mapping[str, Any]) -> bool:
    """An unscoped rule applies to every node, a scoped one to the nodes
    whose ``properties/inspection_scope`` is its scope."""
    return not rule['scope'] or \
        rule['scope'] == properties.get(SCOPE_PROPERTY)


def matches(rule: Mapping[str, Any], sources: Mapping[str, Any],
            plugins: plugins_mod.Plugins) -> bool:
    for condition in rule['conditions']:
        try:
            result = holds(condition, sources, plugins)
        except base.HookError as exc:
            raise base.HookError('Rule %s: %s' % (_name(rule), exc)) \
                from None
        if not result:
            LOG.info('Rule %s does not apply: condition %s %s failed',
                     _name(rule), condition['field'], condition['op'])
            return False
    return True


def holds(condition: Mapping[str, Any], sources: Mapping[str, Any],
          plugins: plugins_mod.Plugins) -> bool:
    """Whether a condition holds; a missing field fails it unless its
    operator accepts ``None``.

    :raises HookError: the operator cannot compare a value.
    """
    plugin = plugins.condition(condition['op'])
    values = paths.find(condition['field'], sources)
    if not values:
        if not plugin.ALLOW_NONE:
            return False
        values = [None]
    params = _params(condition, rules_db.CONDITION_KEYS)
    multiple = condition['multiple']
    for value in values:
        result = _check(plugin, value, params) != condition['invert']
        if (multiple == 'first' or (multiple == 'all' and not result)
                or (multiple == 'any' and result)):
            break
    return result


def _check(plugin: conditions.Condition, value: Any,
           params: Mapping[str, Any]) -> bool:
    try:
        return bool(plugin.check(value, params))
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise base.HookError('Cannot compare %r with %r: %s' % (
            value, params.get('value'), exc)) from None


def run_actions(rule: Mapping[str, Any], target: target_mod.NodeTarget,
                data: dict[str, Any], plugins: plugins_mod.Plugins) -> None:
    for action in rule['actions']:
        plugin = plugins.action(action['action'])
        params = _params(action, rules_db.ACTION_KEYS)
        for name in plugin.FORMATTED_PARAMS:
            if name in params:
                params[name] = format_value(params[name], data)
        plugin.apply(target, params)


def format_value(value: Any, data: Any) -> Any:
    """``value.format(data=data)``, recursively into dicts (keys too) and
    lists; other types are kept.

    :raises HookError: a placeholder that does not fit the data.
    """
    if isinstance(value, str):
        return _format(value, data)
    if isinstance(value, dict):
        return {format_value(k, data): format_value(v, data)
                for k, v in value.items()}
    if isinstance(value, list):
        return [format_value(v, data) for v in value]
    return value


def _format(value: str, data: Any) -> str:
    try:
        return value.format(data=data)
    except KeyError as exc:
        raise base.HookError('Invalid formatting variable key provided in '
                             'value %s: %s' % (value, exc)) from None
    except (IndexError, AttributeError, TypeError, ValueError) as exc:
        raise base.HookError('Invalid formatting of value %s: %s' %
                             (value, exc)) from None


def _params(item: Mapping[str, Any], keys: Container[str]
            ) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in keys}


def _name(rule: Mapping[str, Any]) -> str:
    return rule.get('description') or rule['uuid']
