"""What processing changes on an Ironic node, as data.

Processing hooks and rules run once per introspection, on the stored
data, and only *collect* changes into a :class:`Changes`. The worker
records it in SQL in the transaction that commits ``waiting ->
processing`` (see ``doc/guarantees.md`` D3b), then :func:`apply` sends it.
Every change states its end value, so sending the same changes again
(the ``process`` request delivered again after its worker died) leaves
Ironic as one sending would:

* node and port PATCH operations are ``add`` (set) of final values; a
  ``remove`` whose path is already gone is dropped when sending again;
* a port is created unless Ironic has one with that MAC (a conflict
  means it exists);
* a port is deleted by id, and one already gone is no error;
* adding a trait is a PUT, removing one ignores a missing trait.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import target

LOG = logging.getLogger(__name__)

Patch = list[dict[str, Any]]


@dataclasses.dataclass
class Changes:
    """The end result of processing one introspection's data.

    ``error`` set means processing failed (a hook or rule refused the
    data): nothing is sent and the introspection ends with that error.
    """

    node_patch: Patch = dataclasses.field(default_factory=list)
    reset_interfaces: bool = False
    #: Ports to create: ``{'address': mac, 'pxe_enabled': bool}``.
    new_ports: list[dict[str, Any]] = dataclasses.field(
        default_factory=list)
    #: PATCH operations per port, keyed by the port's (lower-case) MAC.
    port_patches: dict[str, Patch] = dataclasses.field(default_factory=dict)
    #: Ironic port ids of the MACs known when the changes were computed.
    port_ids: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Ports to delete (``[processing] keep_ports``): ``{mac: port id}``.
    deleted_ports: dict[str, str] = dataclasses.field(default_factory=dict)
    #: ``[operation, name]``, operation ``add`` or ``remove``.
    traits: list[list[str]] = dataclasses.field(default_factory=list)
    power_off: bool = False
    #: A node Ironic still has in ``enroll`` (discovered) may have no
    #: working power credentials: failing to power it off is no error.
    power_off_optional: bool = False
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Changes:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    @classmethod
    def failed(cls, error: str) -> Changes:
        return cls(error=error)


def apply(ironic: ironic_client.Ironic, uuid: str, changes: Changes,
          again: bool = False) -> None:
    """Send ``changes`` to Ironic; ``again``: they may have been sent
    (in part) before, by a delivery that died."""
    ids = dict(changes.port_ids)
    for port in changes.new_ports:
        created = ironic.create_port(uuid, port['address'],
                                     pxe_enabled=port['pxe_enabled'])
        if created is not None:
            ids[port['address']] = created
    for mac, port_id in changes.deleted_ports.items():
        LOG.info('Deleting port %s (%s) of node %s', port_id, mac, uuid)
        ironic.delete_port(port_id)
    patch = changes.node_patch
    if again and any(op['op'] == 'remove' for op in patch):
        patch = applicable(target.node_dict(ironic.get_node(uuid)), patch)
    ironic.patch_node(uuid, patch,
                      reset_interfaces=changes.reset_interfaces or None)
    _patch_ports(ironic, uuid, changes.port_patches, ids)
    for operation, name in changes.traits:
        if operation == 'add':
            ironic.add_trait(uuid, name)
        else:
            ironic.remove_trait(uuid, name)


def applicable(node: dict[str, Any], patch: Patch) -> Patch:
    """``patch`` without the ``remove`` operations whose path ``node``
    no longer has (an earlier sending removed it)."""
    view = target.NodeTarget('', node)
    kept = []
    for operation in patch:
        if operation['op'] == 'remove' and not _exists(view.view,
                                                       operation['path']):
            continue
        kept.append(operation)
        view.patch([operation])
    return kept


def _exists(document: dict[str, Any], path: str) -> bool:
    try:
        target.resolve(document, path)
    except (LookupError, TypeError, ValueError):
        return False
    return True


def _patch_ports(ironic: ironic_client.Ironic, uuid: str,
                 port_patches: dict[str, Patch], ids: dict[str, str]) -> None:
    if any(mac not in ids for mac in port_patches):
        ids.update({p.address: p.id for p in ironic.ports(uuid)})
    for mac, operations in port_patches.items():
        if mac not in ids:
            LOG.warning('Port %s of node %s is gone; not updating it',
                        mac, uuid)
            continue
        try:
            ironic.patch_port(ids[mac], operations)
        except ironic_client.NotFound:
            # NOTE: deleted since the introspection started (processing
            # plans from the ports as they were then).
            LOG.warning('Port %s of node %s is gone; not updating it',
                        mac, uuid)
        except ironic_client.BadRequest as exc:
            # NOTE: upstream's: a port Ironic refuses to change (a
            # malformed switch id, say) does not fail introspection.
            LOG.warning('Failed to update port %s of node %s: %s',
                        ids[mac], uuid, exc)

