"""Condition fields: a JSON path (jsonpath-rw) with an optional scheme.

``data://path`` (the default when there is no scheme) looks into the
introspection data, ``node://path`` into the Ironic node as openstacksdk's
``Node.to_dict()`` shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonpath_rw

DATA = 'data'
NODE = 'node'
SCHEMES = (DATA, NODE)


def split(field: str) -> tuple[str, str]:
    """``(scheme, path)`` of a condition field."""
    scheme, sep, path = field.partition('://')
    if not sep:
        return DATA, field
    return scheme, path


def validate(field: str) -> None:
    """:raises ValueError: an unknown scheme or a path that does not parse."""
    scheme, path = split(field)
    if scheme not in SCHEMES:
        raise ValueError('Unsupported scheme for field: %s, valid values '
                         'are node:// or data://' % scheme)
    try:
        jsonpath_rw.parse(path)
    except Exception as exc:
        # NOTE: jsonpath-rw's parser reports a syntax error as anything
        # from an AttributeError to a generic Exception.
        raise ValueError('Unable to parse field JSON path %s: %s' %
                         (field, exc or type(exc).__name__)) from None


def find(field: str, sources: Mapping[str, Any]) -> list[Any]:
    """Every value at ``field``; ``sources`` maps a scheme to its document.

    A path that cannot be walked in this document (an index into a
    string, say) finds nothing.
    """
    scheme, path = split(field)
    try:
        return [m.value for m in jsonpath_rw.parse(path).find(
            sources[scheme])]
    except (TypeError, AttributeError, KeyError, IndexError):
        return []
