"""Root-device hints in Ironic's syntax (``properties/root_device``).

A hint names a disk field (``size`` in GiB, ``model``, ``wwn``,
``serial``, ``vendor``, ``wwn_with_extension``, ``wwn_vendor_extension``,
``name``, ``rotational``, ``hctl``, ``by_path``) and an expression
``[<op>] <value>`` with the operators of :mod:`oslo_utils.specs_matcher`
(``==``, ``>=``, ``s==``, ``<in>``, ``<or>`` ...). Without an operator a
string hint means ``s==`` and a number ``==``. Strings are compared in
lower case; a disk matches when it satisfies every hint.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from urllib import parse as urlparse

from oslo_utils import specs_matcher
from oslo_utils import strutils

GiB = 1024 ** 3
TYPES = {'size': int, 'model': str, 'wwn': str, 'serial': str,
         'vendor': str, 'wwn_with_extension': str,
         'wwn_vendor_extension': str, 'name': str, 'rotational': bool,
         'hctl': str, 'by_path': str}
OPERATORS = frozenset(specs_matcher.op_methods)
_OPERATOR_CHARS = frozenset('<>=!s')


class HintError(ValueError):
    """Hints that cannot be used: not JSON, unknown name or operator,
    a value of the wrong type."""


def parse(hints: Any) -> dict[str, Any]:
    """``{name: expression}`` ready for :func:`matches`, from a dict or
    its JSON text. :raises HintError: on anything invalid."""
    if isinstance(hints, str):
        try:
            hints = json.loads(hints)
        except ValueError as exc:
            raise HintError('Root device hints are not valid JSON: %s'
                            % exc) from None
    if not isinstance(hints, dict):
        raise HintError('Root device hints must be an object, got %s'
                        % type(hints).__name__)
    unknown = sorted(set(hints) - set(TYPES))
    if unknown:
        raise HintError('The hints "%s" are invalid. Valid hints are: '
                        '"%s"' % (', '.join(unknown), ', '.join(TYPES)))
    return {name: _PARSERS[TYPES[name]](name, value)
            for name, value in hints.items()}


def find(disks: Iterable[dict[str, Any]], hints: dict[str, Any]
         ) -> list[dict[str, Any]]:
    """The disks (dicts of the inventory) matching every parsed hint."""
    return [disk for disk in disks
            if all(matches(disk.get(name), name, expression)
                   for name, expression in hints.items())]


def matches(value: Any, name: str, expression: Any) -> bool:
    """Whether a disk's field ``value`` satisfies a parsed hint."""
    kind = TYPES[name]
    if value is None or value == '':
        return False
    if kind is bool:
        try:
            return strutils.bool_from_string(value, strict=True) == \
                expression
        except ValueError:
            return False
    if kind is int:
        try:
            value = float(value) / GiB
        except (TypeError, ValueError):
            return False
        # NOTE: a whole number of GiB compares equal to the text of an
        # integer hint (``<or> 10 <or> 500``), not only numerically.
        value = int(value) if value.is_integer() else value
    else:
        value = _quote(str(value).strip().lower())
    try:
        return specs_matcher.match(str(value), expression)
    except (TypeError, ValueError, SyntaxError) as exc:
        raise HintError('Hint %s=%r cannot be evaluated: %s'
                        % (name, expression, exc)) from None


def _split(name: str, expression: Any) -> tuple[str, list[str]]:
    """``(operator or '', [values])`` of an expression, lower case."""
    text = str(expression).strip().lower()
    if not text:
        raise HintError('Root device hint "%s" expression is empty' % name)
    first = text.split(None, 1)[0]
    if first in OPERATORS:
        rest = text[len(first):]
        values = rest.split(first) if first == '<or>' else [rest]
        values = [v.strip() for v in values if v.strip()]
        if not values:
            raise HintError('Root device hint "%s" has operator %s and no '
                            'value' % (name, first))
        return first, values
    if _looks_like_operator(first):
        raise HintError('Root device hint "%s" uses unknown operator "%s"; '
                        'known: %s' % (name, first,
                                       ' '.join(sorted(OPERATORS))))
    return '', [text]


def _looks_like_operator(token: str) -> bool:
    if token.startswith('<') and token.endswith('>') and len(token) > 2:
        return True
    return set(token) <= _OPERATOR_CHARS and bool(set(token) - {'s'})


def _parse_str(name: str, expression: Any) -> str:
    if not isinstance(expression, str):
        raise HintError('Root device hint "%s" is not a string value. Hint '
                        'expression: %s' % (name, expression))
    operator, values = _split(name, expression)
    quoted = [_quote(v) for v in values]
    if operator == '<or>':
        return '<or> ' + ' <or> '.join(quoted)
    return '%s %s' % (operator or 's==', ' '.join(quoted))


def _parse_int(name: str, expression: Any) -> str:
    if isinstance(expression, bool):
        raise HintError('Root device hint "%s" is not an integer value. '
                        'Current value: %s' % (name, expression))
    operator, values = _split(name, expression)
    for value in values:
        try:
            number = int(value)
        except ValueError:
            raise HintError('Root device hint "%s" is not an integer value. '
                            'Current value: %s' % (name, expression)) \
                from None
        if number <= 0:
            raise HintError('Root device hint "%s" should be a positive '
                            'integer. Current value: %s' % (name, expression))
    if operator == '<or>':
        return '<or> ' + ' <or> '.join(values)
    return '%s %s' % (operator or '==', values[0])


def _parse_bool(name: str, expression: Any) -> bool:
    try:
        return strutils.bool_from_string(expression, strict=True)
    except ValueError:
        raise HintError('Root device hint "%s" is not a Boolean value. '
                        'Current value: %s' % (name, expression)) from None


def _quote(text: str) -> str:
    """Spaces and special characters in a value would split it into
    tokens of the matcher's grammar: compare them URL-quoted."""
    return urlparse.quote(text)


_PARSERS = {str: _parse_str, int: _parse_int, bool: _parse_bool}
