"""local_link_connection: switch id and port id of ports, from LLDP."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from inspector_ha.common import addresses
from inspector_ha.processing import base
from inspector_ha.processing import lldp

if TYPE_CHECKING:
    from inspector_ha.ironic import client as ironic_client

LOG = logging.getLogger(__name__)
#: lldp_processed name -> local_link_connection item.
ITEMS = {'switch_chassis_id': 'switch_id', 'switch_port_id': 'port_id'}


class LocalLinkConnectionHook(base.ProcessingHook):
    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        all_interfaces = data.get('all_interfaces') or {}
        for name, tlvs in lldp.raw_tlvs(data).items():
            iface = all_interfaces.get(name)
            if iface is None:
                continue
            port = node.ports().get(iface['mac'])
            if port is None:
                LOG.debug('No Ironic port for interface %s of node %s',
                          name, node.uuid)
                continue
            operations = self._operations(port, link_values(iface, tlvs))
            if operations:
                node.patch_port(port, operations)

    def _operations(self, port: ironic_client.Port, values: dict[str, Any]
                    ) -> list[dict[str, Any]]:
        overwrite = self.conf.processing.overwrite_existing
        return [{'op': 'add', 'path': '/local_link_connection/' + item,
                 'value': value} for item, value in values.items()
                if overwrite or item not in port.local_link_connection]


def link_values(iface: dict[str, Any], tlvs: list[Any]) -> dict[str, Any]:
    """``{switch_id, port_id}`` from lldp_basic's result if it has them,
    else from the raw TLVs; a switch id that is not a MAC is left out."""
    return (_values(iface.get('lldp_processed') or {}) or
            _values(lldp.parse(tlvs)))


def _values(processed: dict[str, Any]) -> dict[str, Any]:
    values = {item: processed[name] for name, item in ITEMS.items()
              if processed.get(name)}
    switch_id = values.get('switch_id')
    if switch_id is not None and not addresses.MAC.match(
            str(switch_id).lower()):
        LOG.info("Skipping switch_id since it's not a MAC: %s", switch_id)
        del values['switch_id']
    return values
