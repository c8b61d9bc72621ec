"""raid_device: the root device learnt in two introspections.

The first run stores the serials of the disks in
``extra/block_devices``; a later run that finds exactly one new serial
sets ``properties/root_device`` to it and removes ``extra/block_devices``
(for a RAID volume created between the two runs). A node that already
has a root device is left alone.
"""

from __future__ import annotations

import logging
from typing import Any

from inspector_ha.processing import base

LOG = logging.getLogger(__name__)


class RaidDeviceHook(base.ProcessingHook):
    def before_processing(self, data: dict[str, Any]) -> None:
        if not data.get('local_gb'):
            LOG.info('No volume is found on the node. Adding a fake value '
                     'for "local_gb"')
            data['local_gb'] = 1

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        serials = _serials(data)
        if not serials:
            LOG.warning('No block device was received from ramdisk')
            return
        if 'root_device' in node.properties:
            LOG.info('Root device is already known for node %s', node.uuid)
            return
        previous = ((getattr(node.node, 'extra', None) or {})
                    .get('block_devices') or {}).get('serials')
        if previous is None:
            node.patch([{'op': 'add', 'path': '/extra/block_devices',
                         'value': {'serials': serials}}])
            return
        new = [s for s in serials if s not in previous]
        if len(new) != 1:
            LOG.warning('Root device of node %s cannot be identified: %d '
                        'new devices were found', node.uuid, len(new))
            return
        node.patch([{'op': 'remove', 'path': '/extra/block_devices'},
                    {'op': 'add', 'path': '/properties/root_device',
                     'value': {'serial': new[0]}}])


def _serials(data: dict[str, Any]) -> list[Any]:
    inventory = data.get('inventory')
    if isinstance(inventory, dict):
        return [d['serial'] for d in inventory.get('disks') or ()
                if isinstance(d, dict) and d.get('serial')]
    legacy = data.get('block_devices')
    serials = legacy.get('serials') if isinstance(legacy, dict) else None
    return list(serials) if isinstance(serials, list) else []
