"""What rule actions change of an Ironic node, collected for one commit.

A :class:`NodeTarget` turns actions into JSON-patch operations on ``/...``
paths and into trait additions and removals. It keeps a view of the node
(the node as the processing hooks left it, then each action's change), so
that an action sees what an earlier one did, as upstream's actions see
the node after each of their PATCH calls.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any


class NodeTarget:
    """:param node: the node as a dict (openstacksdk ``Node.to_dict()``).
    :param pending: JSON-patch operations not yet sent (the hooks').
    """

    def __init__(self, uuid: str, node: dict[str, Any],
                 pending: Iterable[dict[str, Any]] = ()) -> None:
        self.uuid = uuid
        self.view = copy.deepcopy(node)
        for operation in pending:
            self._see(operation)
        self.patches: list[dict[str, Any]] = []
        self.traits: list[tuple[str, str]] = []
        self.reset_interfaces = False

    @property
    def properties(self) -> dict[str, Any]:
        return self.view.get('properties') or {}

    def patch(self, operations: Iterable[dict[str, Any]],
              reset_interfaces: bool = False) -> None:
        for operation in operations:
            operation = dict(operation, path=normalise(operation['path']))
            self._see(operation)
            self.patches.append(operation)
        self.reset_interfaces = self.reset_interfaces or reset_interfaces

    def _see(self, operation: dict[str, Any]) -> None:
        try:
            apply_operation(self.view, operation)
        except (LookupError, TypeError, ValueError, AttributeError):
            # NOTE: Ironic will refuse this operation; the view keeps
            # what it had.
            pass

    def update_capabilities(self, **caps: Any) -> None:
        existing = capabilities_to_dict(self.properties.get('capabilities'))
        existing.update(caps)
        self.patch([{'op': 'add', 'path': '/properties/capabilities',
                     'value': dict_to_capabilities(existing)}])

    def replace_field(self, path: str, func: Callable[[Any], Any],
                      default: Any) -> None:
        """Patch ``path`` with ``func(current value or default)``."""
        try:
            value = copy.deepcopy(resolve(self.view, path))
        except (KeyError, IndexError, TypeError, ValueError):
            value = copy.deepcopy(default)
        self.patch([{'op': 'add', 'path': path, 'value': func(value)}])

    def add_trait(self, name: str) -> None:
        self.traits.append(('add', name))

    def remove_trait(self, name: str) -> None:
        self.traits.append(('remove', name))


def node_dict(node: Any) -> dict[str, Any]:
    """An openstacksdk node (or any object) as the dict rules see."""
    to_dict = getattr(node, 'to_dict', None)
    return to_dict(computed=False) if to_dict else dict(vars(node))


def normalise(path: str) -> str:
    return '/' + path.lstrip('/')


def _parts(path: str) -> list[str]:
    return [p.replace('~1', '/').replace('~0', '~')
            for p in normalise(path)[1:].split('/')]


def resolve(document: Any, path: str) -> Any:
    """The value at a JSON pointer; raises a lookup error if none."""
    for part in _parts(path):
        document = document[_key(document, part)]
    return document


def _key(container: Any, part: str) -> int | str:
    return int(part) if isinstance(container, list) else part


def apply_operation(document: Any, operation: dict[str, Any]) -> None:
    """Apply one JSON-patch ``add``, ``replace`` or ``remove`` leniently
    (missing parents are created) to a view; others are ignored."""
    *parents, last = _parts(operation['path'])
    for part in parents:
        document = document.setdefault(part, {}) if isinstance(
            document, dict) else document[int(part)]
    if operation['op'] in ('add', 'replace'):
        _put(document, last, operation.get('value'))
    elif operation['op'] == 'remove' and isinstance(document, dict):
        document.pop(last, None)


def _put(container: Any, key: str, value: Any) -> None:
    if not isinstance(container, list):
        container[key] = value
    elif key == '-':
        container.append(value)
    else:
        container.insert(int(key), value)


def capabilities_to_dict(caps: Any) -> dict[str, Any]:
    """``'a:1,b:2'`` to ``{'a': '1', 'b': '2'}`` (a dict stays a dict)."""
    if not caps:
        return {}
    if isinstance(caps, dict):
        return dict(caps)
    return dict(item.split(':', 1) for item in caps.split(',')
                if ':' in item)


def dict_to_capabilities(caps: dict[str, Any]) -> str:
    """The inverse; a capability whose value is ``None`` is dropped."""
    return ','.join('%s:%s' % (k, v) for k, v in caps.items()
                    if v is not None)
