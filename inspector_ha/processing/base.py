"""The processing hook interface (entry points
``inspector_ha.hooks.processing``)."""

import logging

from inspector_ha.ironic import client as ironic_client
from inspector_ha.rules import target

LOG = logging.getLogger(__name__)


class HookError(Exception):
    """A hook refuses the data; the introspection fails with this text."""


class ProcessingHook:
    """Base of processing hooks; both phases are optional.

    ``before_processing(data)`` runs in the API process before lookup and
    must not call Ironic; ``before_update(data, node)`` runs in a worker,
    in ``processing``, with a :class:`NodeContext`.
    """

    dependencies = ()

    def __init__(self, conf):
        self.conf = conf

    def before_processing(self, data):
        pass

    def before_update(self, data, node):
        pass


class NodeContext:
    """What a hook may see and change of the Ironic node.

    Property changes are collected and sent as one PATCH, port changes
    as one PATCH per port, and ports are created only for MACs Ironic does
    not have yet, to keep the number of Ironic calls per introspection low.
    """

    def __init__(self, ironic, node, known_macs):
        self.uuid = node.id
        self.node = node
        self.known_macs = set(known_macs)
        self.patches = []
        self.port_patches = {}
        self._ironic = ironic
        self._ports = None

    @property
    def properties(self):
        return self.node.properties or {}

    def set_property(self, name, value, overwrite=True):
        if not overwrite and name in self.properties:
            return
        path = '/properties/' + name
        self.patches = [p for p in self.patches if p['path'] != path]
        self.patches.append({'op': 'add', 'path': path, 'value': value})

    def pending_property(self, name):
        """A property's value once the collected patch is applied."""
        path = '/properties/' + name
        for operation in reversed(self.patches):
            if operation['path'] == path:
                return operation.get('value') if operation['op'] in (
                    'add', 'replace') else None
        return self.properties.get(name)

    def update_capabilities(self, **caps):
        """Merge ``caps`` into ``properties/capabilities`` (``k:v,...``),
        keeping what Ironic has and what earlier hooks set."""
        merged = target.capabilities_to_dict(
            self.pending_property('capabilities'))
        merged.update(caps)
        self.set_property('capabilities',
                          target.dict_to_capabilities(merged))

    def patch(self, operations):
        """Add JSON-patch operations on the node to the collected patch."""
        self.patches.extend(operations)

    def create_port(self, mac, pxe_enabled):
        if mac.lower() in self.known_macs:
            return
        self._ironic.create_port(self.uuid, mac, pxe_enabled=pxe_enabled)
        self.known_macs.add(mac.lower())
        self._ports = None

    def ports(self):
        """``{mac: Port}`` of the node's Ironic ports, listed once (again
        after a port was created)."""
        if self._ports is None:
            self._ports = {p.address: p
                           for p in self._ironic.ports(self.uuid)}
        return self._ports

    def patch_port(self, port, operations):
        """Collect JSON-patch operations on a :class:`~inspector_ha.ironic.
        client.Port`; sent by :meth:`commit`, one PATCH per port."""
        self.port_patches.setdefault(port.id, []).extend(operations)

    def commit(self):
        self._ironic.patch_node(self.uuid, self.patches)
        self.patches = []
        port_patches, self.port_patches = self.port_patches, {}
        for port_id, operations in port_patches.items():
            try:
                self._ironic.patch_port(port_id, operations)
            except ironic_client.BadRequest as exc:
                # NOTE: upstream's: a port Ironic refuses to change (a
                # malformed switch id, say) does not fail introspection.
                LOG.warning('Failed to update port %s of node %s: %s',
                            port_id, self.uuid, exc)
