"""Condition plugins (entry points ``inspector_ha.rules.conditions``).

``check(field, params)`` gets one value found at the condition's field
(``None`` when nothing was found and the plugin sets ``ALLOW_NONE``) and
the condition's own parameters.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from typing import Any

import netaddr

from inspector_ha.rules import plugins


class Condition(plugins.WithValidation):
    REQUIRED_PARAMS = frozenset(['value'])
    #: Whether a field missing from the data is checked as ``None``; if
    #: not, the whole rule is skipped.
    ALLOW_NONE = False

    def check(self, field: Any, params: Mapping[str, Any]) -> object:
        raise NotImplementedError()


def coerce(value: Any, expected: object) -> Any:
    """The field value converted to the type of the rule's ``value``."""
    if isinstance(expected, float):
        return float(value)
    if isinstance(expected, int):
        return int(value)
    return value


class SimpleCondition(Condition):
    op: Any = None

    def check(self, field: Any, params: Mapping[str, Any]) -> object:
        value = params['value']
        return self.op(coerce(field, value), value)


class EqCondition(SimpleCondition):
    op = operator.eq


class LtCondition(SimpleCondition):
    op = operator.lt


class GtCondition(SimpleCondition):
    op = operator.gt


class LeCondition(SimpleCondition):
    op = operator.le


class GeCondition(SimpleCondition):
    op = operator.ge


class NeCondition(SimpleCondition):
    op = operator.ne


class NetCondition(Condition):
    """``in-net``: the field is an IP address inside the CIDR ``value``."""

    def validate(self, params: Mapping[str, Any]) -> None:
        super().validate(params)
        try:
            netaddr.IPNetwork(params['value'])
        except (netaddr.AddrFormatError, TypeError, ValueError) as exc:
            raise ValueError('invalid value: %s' % exc) from None

    def check(self, field: Any, params: Mapping[str, Any]) -> bool:
        try:
            address = netaddr.IPAddress(field)
        except netaddr.AddrFormatError as exc:
            raise ValueError(str(exc)) from None
        return address in netaddr.IPNetwork(params['value'])


class ReCondition(Condition):
    def validate(self, params: Mapping[str, Any]) -> None:
        super().validate(params)
        try:
            re.compile(params['value'])
        except (re.error, TypeError) as exc:
            raise ValueError('invalid regular expression: %s' % exc) \
                from None


class MatchesCondition(ReCondition):
    """``matches``: the whole field matches the regular expression."""

    def check(self, field: Any, params: Mapping[str, Any]) -> bool:
        regexp = params['value']
        if not regexp.endswith('$'):
            regexp += '$'
        return re.match(regexp, str(field)) is not None


class ContainsCondition(ReCondition):
    """``contains``: the regular expression is found in the field."""

    def check(self, field: Any, params: Mapping[str, Any]) -> bool:
        return re.search(params['value'], str(field)) is not None


class EmptyCondition(Condition):
    """``is-empty``: the field is missing, null, or an empty string, list
    or object."""

    REQUIRED_PARAMS = frozenset()
    ALLOW_NONE = True

    def check(self, field: Any, params: Mapping[str, Any]) -> bool:
        return field in ('', None, [], {})
