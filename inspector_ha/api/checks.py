"""Checks and facts about an Ironic node before introspection starts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openstack import exceptions as sdk_exc

from inspector_ha.api import errors
from inspector_ha.ironic import client

if TYPE_CHECKING:
    from inspector_ha.ironic import node as node_mod


def check_startable(ironic: client.Ironic, node: node_mod.Node,
                    manage_boot: bool, permit_active: bool) -> None:
    """Refuse (400) a node Ironic would not let us introspect
    (``permit_active``: ``[processing] permit_active_introspection``)."""
    if node.provision_state not in client.VALID_STATES and not (
            permit_active and
            node.provision_state in client.ACTIVE_STATES):
        raise errors.ApiError(
            'Refusing to introspect node %s with provision state "%s" and '
            'maintenance mode %s' % (node.id, node.provision_state,
                                     'on' if node.is_maintenance else 'off'))
    if manage_boot:
        try:
            ironic.validate_power(node.id)
        except sdk_exc.ValidationException as exc:
            raise errors.ApiError('Failed validation of power interface: %s'
                                  % exc) from None

