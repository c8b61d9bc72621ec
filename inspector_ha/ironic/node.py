"""An Ironic node read as JSON, seen as openstacksdk's ``Node`` shows it.

openstacksdk builds a resource object of some 70 fields for every node it
reads, which costs more CPU than the HTTP call itself; the service reads
a node on every introspection start and every processing. :class:`Node`
holds the same values under the same names (``id``, ``is_maintenance``,
``to_dict(computed=False)``) from Ironic's JSON or from a snapshot a
request recorded, so the hooks, the rules (``node://`` paths) and the
snapshot a request carries see what they saw through openstacksdk.
"""

from __future__ import annotations

from typing import Any

from openstack import fields
from openstack.baremetal.v1 import node as sdk_node


def _attribute_names() -> dict[str, str]:
    """openstacksdk's attribute name of each field Ironic names: its
    ``Body`` attributes, as the class resolves them."""
    body = ((name, getattr(sdk_node.Node, name))
            for name in dir(sdk_node.Node))
    return {name: field.name for name, field in body
            if isinstance(field, fields.Body)}


#: openstacksdk attribute -> Ironic field (``id`` -> ``uuid``, ...).
FIELDS = _attribute_names()
#: Ironic field -> openstacksdk attribute.
ATTRIBUTES = {field: attribute for attribute, field in FIELDS.items()}


def ironic_fields(attributes: list[str]) -> str:
    """The ``fields`` query of attributes (either naming), as
    openstacksdk's ``get_node(fields=...)`` sends it."""
    return ','.join(FIELDS.get(name, name) for name in attributes)


class Node(dict[str, Any]):
    """A read-only Ironic node: a dict of every field by openstacksdk's
    name (None where Ironic did not send it), read also as attributes,
    and by Ironic's name as an item (``node['uuid']``), as openstacksdk's
    resource (itself a dict) is."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__((name, values.get(name)) for name in FIELDS)

    @classmethod
    def from_ironic(cls, body: dict[str, Any], ident: str) -> Node:
        """From ``GET /v1/nodes/<ident>``'s JSON (Ironic's field names);
        without ``uuid`` among the fields read, ``id`` is ``ident``, as
        openstacksdk has it."""
        values = {ATTRIBUTES[field]: value for field, value in body.items()
                  if field in ATTRIBUTES}
        values.setdefault('id', ident)
        if 'provision_state' in values and values['provision_state'] is None:
            # NOTE: openstacksdk's: API 1.1 said None for "available".
            values['provision_state'] = 'available'
        return cls(values)

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> Node:
        """From :meth:`to_dict`'s output (openstacksdk's names)."""
        return cls(snapshot)

    def __getattr__(self, name: str) -> Any:
        try:
            return dict.__getitem__(self, name)
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        if not dict.__contains__(self, name):
            name = ATTRIBUTES.get(name, name)
        return dict.__getitem__(self, name)

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in ATTRIBUTES

    def to_dict(self, computed: bool = False, **_: Any) -> dict[str, Any]:
        """Every field by openstacksdk's name, as ``Node.to_dict(
        computed=False)`` gives it (a node has no computed field but
        ``location``, which is never recorded)."""
        return dict(self)

    def __repr__(self) -> str:
        return 'Node(id=%r, provision_state=%r)' % (
            self.get('id'), self.get('provision_state'))
