"""enroll: create the Ironic node of a ramdisk nobody introspects.

Refuses when a MAC of the data is already an Ironic port or when an
Ironic node already has its BMC address (which lists every node, as
upstream does); otherwise creates the node in ``enroll`` with
``[discovery] enroll_node_driver``, ``enroll_node_fields`` and
``driver_info/ipmi_address``, and marks the data ``auto_discovered`` so
that rules can tell such nodes apart.
"""

from __future__ import annotations

import logging
from typing import Any

from oslo_config import cfg
from oslo_config import types

from inspector_ha.common import addresses
from inspector_ha.ironic import bmc as ironic_bmc
from inspector_ha.processing import base
from inspector_ha.processing import not_found
from inspector_ha.processing import ramdisk_data

LOG = logging.getLogger(__name__)

GROUP = 'discovery'

OPTS = [
    cfg.StrOpt('enroll_node_driver', default='fake-hardware',
               help='Hardware type (driver) of the Ironic nodes the enroll '
                    'hook creates.'),
    cfg.DictOpt('enroll_node_fields', default={},
                help='More fields of the Ironic nodes the enroll hook '
                     'creates, as name:value pairs (for example '
                     'conductor_group:rack1,resource_class:baremetal).'),
    cfg.ListOpt('enabled_bmc_address_version', default=['4', '6'],
                item_type=types.String(choices=['4', '6']),
                help='BMC address versions the enroll hook stores as the '
                     'new node\'s ipmi_address, in order of preference: '
                     '"4,6" (IPv4 first), "6,4", "4" or "6".'),
]


class EnrollHook(not_found.NodeNotFoundHook):
    OPTIONS = [(GROUP, OPTS)]

    def __call__(self, data: dict[str, Any]) -> str:
        bmc = self._bmc_address(data)
        self._refuse_known(data, bmc)
        fields = dict(self.conf.discovery.enroll_node_fields)
        driver_info = {'ipmi_address': bmc} if bmc else {}
        fields.update(driver=self.conf.discovery.enroll_node_driver,
                      driver_info=driver_info, provision_state='enroll')
        node = self.ironic.create_node(**fields)
        LOG.info('Enrolled node %s (BMC %s, MACs %s)', node.id, bmc,
                 ramdisk_data.lookup_macs(data))
        data['auto_discovered'] = True
        return node.id

    def _bmc_address(self, data: dict[str, Any]) -> str | None:
        reported = {'4': data.get('ipmi_address'),
                    '6': data.get('ipmi_v6address')}
        for version in self.conf.discovery.enabled_bmc_address_version:
            if reported[version] not in addresses.NO_BMC:
                return reported[version]
        LOG.warning('No BMC address provided, discovered node will be '
                    'created without ipmi address')
        return None

    def _refuse_known(self, data: dict[str, Any], bmc: str | None
                      ) -> None:
        macs = ramdisk_data.lookup_macs(data)
        if not macs:
            LOG.warning('No suitable interfaces found for discovered node. '
                        'Check that validate_interfaces is in [processing] '
                        'processing_hooks')
        for mac in macs:
            owner = self.ironic.port_owner(mac)
            if owner is not None:
                raise base.HookError('Port %s already exists, uuid: %s' %
                                     (mac, owner[0]))
        if bmc:
            for node in self.ironic.nodes_with_driver_info():
                if bmc in ironic_bmc.bmc_addresses(
                        node, self.conf.ipmi_address_fields):
                    raise base.HookError(
                        'Node %s already has BMC address %s, not enrolling'
                        % (node.id, bmc))
