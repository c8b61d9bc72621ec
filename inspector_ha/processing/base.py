"""The processing hook interface (entry points
``inspector_ha.hooks.processing``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import changes as changes_mod
from inspector_ha.processing import target

if TYPE_CHECKING:
    from oslo_config import cfg

    from inspector_ha.ironic import node as ironic_node

LOG = logging.getLogger(__name__)


class HookError(Exception):
    """A hook refuses the data; the introspection fails with this text."""


def pre_hooks_failed(failures: Iterable[str]) -> str:
    """The error of an introspection whose pre-processing hooks failed,
    in upstream's words."""
    return ('The following failures happened during running '
            'pre-processing hooks:\n%s' % '\n'.join(failures))


class OwnOptions:
    """A hook with options of its own declares them in ``OPTIONS``
    (``[(group, [opts])]``), as a PXE filter driver does: they are
    registered as the hook is loaded, and :func:`list_opts` (found
    through its entry point) lists them for the sample configuration."""

    OPTIONS: ClassVar[Sequence[tuple[str, Sequence[cfg.Opt]]]] = ()

    @classmethod
    def list_opts(cls) -> list[tuple[str, list[cfg.Opt]]]:
        return [(group, list(opts)) for group, opts in cls.OPTIONS]

    @classmethod
    def register_opts(cls, conf: cfg.ConfigOpts) -> None:
        for group, opts in cls.OPTIONS:
            conf.register_opts(opts, group=group)


class ProcessingHook(OwnOptions):
    """Base of processing hooks; both phases are optional.

    ``before_processing(data)`` runs in the API process before lookup and
    must not call Ironic; ``before_update(data, node)`` runs in a worker,
    in ``processing``, with a :class:`NodeContext`.
    """

    dependencies: tuple[str, ...] = ()

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.register_opts(conf)
        self.conf = conf

    def before_processing(self, data: dict[str, Any]) -> None:
        pass

    def before_update(self, data: dict[str, Any],
                      node: NodeContext) -> None:
        pass


class NodeContext:
    """What a hook may see and change of the Ironic node.

    Nothing is sent from here: every change is collected into one
    :class:`~inspector_ha.processing.changes.Changes` (one PATCH for the
    node, one per port, a port created only for a MAC Ironic does not
    have), which the worker records in SQL and then sends.
    """

    def __init__(self, ironic: ironic_client.Ironic,
                 node: ironic_node.Node, known_macs: Iterable[str],
                 ports: Iterable[ironic_client.Port] | None = None
                 ) -> None:
        self.uuid: str = node.id
        self.node = node
        self.known_macs = set(known_macs)
        self.patches: changes_mod.Patch = []
        self.traits: list[Sequence[str]] = []
        self.reset_interfaces = False
        self._new_ports: dict[str, dict[str, Any]] = {}
        self._port_patches: dict[str, changes_mod.Patch] = {}
        self._deleted_ports: dict[str, str] = {}
        self._ironic = ironic
        # NOTE: the ports as the introspection started, when recorded;
        # else listed from Ironic on first use.
        self._ports = None if ports is None else {p.address: p
                                                  for p in ports}

    @property
    def properties(self) -> dict[str, Any]:
        return self.node.properties or {}

    def set_property(self, name: str, value: Any,
                     overwrite: bool = True) -> None:
        if not overwrite and name in self.properties:
            return
        path = '/properties/' + name
        self.patches = [p for p in self.patches if p['path'] != path]
        self.patches.append({'op': 'add', 'path': path, 'value': value})

    def pending_property(self, name: str) -> Any:
        """A property's value once the collected patch is applied."""
        path = '/properties/' + name
        for operation in reversed(self.patches):
            if operation['path'] == path:
                return operation.get('value') if operation['op'] in (
                    'add', 'replace') else None
        return self.properties.get(name)

    def update_capabilities(self, **caps: Any) -> None:
        """Merge ``caps`` into ``properties/capabilities`` (``k:v,...``),
        keeping what Ironic has and what earlier hooks set."""
        merged = target.capabilities_to_dict(
            self.pending_property('capabilities'))
        merged.update(caps)
        self.set_property('capabilities',
                          target.dict_to_capabilities(merged))

    def patch(self, operations: Iterable[dict[str, Any]]) -> None:
        """Add JSON-patch operations on the node to the collected patch."""
        self.patches.extend(operations)

    def create_port(self, mac: str, pxe_enabled: bool) -> None:
        """Plan a port for ``mac`` unless Ironic has one; later hooks see
        it in :meth:`ports` (with no id yet) and may patch it."""
        mac = mac.lower()
        if mac in self.known_macs:
            return
        self._new_ports[mac] = {'address': mac, 'pxe_enabled': pxe_enabled}
        self.known_macs.add(mac)

    def ports(self) -> dict[str, ironic_client.Port]:
        """``{mac: Port}`` of the node's Ironic ports (listed once) and of
        the ports planned by :meth:`create_port`."""
        if self._ports is None:
            self._ports = {p.address: p
                           for p in self._ironic.ports(self.uuid)}
        planned = {mac: ironic_client.Port(None, mac, {}, None,
                                           port['pxe_enabled'])
                   for mac, port in self._new_ports.items()
                   if mac not in self._ports}
        return {mac: port for mac, port in dict(self._ports, **planned)
                .items() if mac not in self._deleted_ports}

    def delete_port(self, port: ironic_client.Port) -> None:
        """Plan deleting a :class:`~inspector_ha.ironic.client.Port` that
        Ironic has (one only planned is dropped from the plan)."""
        self._new_ports.pop(port.address, None)
        self._port_patches.pop(port.address, None)
        if port.id is not None:
            self._deleted_ports[port.address] = port.id

    def patch_port(self, port: ironic_client.Port,
                   operations: Iterable[dict[str, Any]]) -> None:
        """Collect JSON-patch operations on a :class:`~inspector_ha.ironic.
        client.Port`; sent with the other changes, one PATCH per port."""
        self._port_patches.setdefault(port.address, []).extend(operations)

    def changes(self) -> changes_mod.Changes:
        """Everything collected, as the data the worker records."""
        ids = {mac: port.id for mac, port in (self._ports or {}).items()}
        return changes_mod.Changes(
            node_patch=list(self.patches),
            reset_interfaces=self.reset_interfaces,
            new_ports=list(self._new_ports.values()),
            port_patches={mac: list(ops)
                          for mac, ops in self._port_patches.items()},
            port_ids={mac: ids[mac] for mac in self._port_patches
                      if mac in ids},
            deleted_ports=dict(self._deleted_ports),
            traits=[list(t) for t in self.traits])
