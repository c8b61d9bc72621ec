"""Data from an active node (``[processing] permit_active_introspection``).

As upstream: when ramdisk data matches no node under introspection and
the option is set, the Ironic node is looked up by its ports' MACs, then
by BMC address; if it is ``active`` or in ``rescue`` its data is
processed (the API records it in ``enrolling`` with ``manage_boot``
false, so it is not powered off, and ``validate_interfaces`` leaves its
ports alone). A node found in another state is refused with 400.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from inspector_ha.api import errors
from inspector_ha.ironic import bmc
from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import ramdisk_data

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
STATES = ironic_client.ACTIVE_STATES


def find(ironic: ironic_client.Ironic, conf: cfg.ConfigOpts,
         data: dict[str, Any]) -> str | None:
    """The UUID of the active Ironic node the data is for, or None (the
    option is off, or Ironic has no such node)."""
    if not conf.processing.permit_active_introspection:
        return None
    uuid = _by_mac(ironic, ramdisk_data.lookup_macs(data)) or \
        _by_bmc(ironic, conf.ipmi_address_fields,
                ramdisk_data.lookup_bmcs(data))
    if uuid is None:
        LOG.debug('Active node introspection is enabled, but no Ironic '
                  'node has these MACs or BMC addresses')
        return None
    state = ironic.get_node(uuid, fields=['uuid', 'provision_state'])
    if state.provision_state not in STATES:
        raise errors.ApiError('Node %s is not active, its provision state '
                              'is %s' % (uuid, state.provision_state))
    LOG.info('Processing data of active node %s', uuid)
    return uuid


def _by_mac(ironic: ironic_client.Ironic,
            macs: Iterable[str]) -> str | None:
    for mac in macs:
        owner = ironic.port_owner(mac)
        if owner is not None:
            return owner[1]
    return None


def _by_bmc(ironic: ironic_client.Ironic, address_fields: Iterable[str],
            bmcs: Iterable[str]) -> str | None:
    if not bmcs:
        return None
    for node in ironic.nodes_with_driver_info():
        found = bmc.bmc_addresses(node, address_fields)
        if set(bmcs) & set(found):
            return node.id
    return None
