"""pci_devices: counts of aliased PCI devices as node capabilities."""

from __future__ import annotations

import collections
import json
import logging
from collections.abc import Iterable
from typing import Any

from oslo_config import cfg

from inspector_ha.processing import base

LOG = logging.getLogger(__name__)

GROUP = 'pci_devices'

OPTS = [
    cfg.MultiStrOpt('alias', default=[],
                    help='An alias of a PCI device, as JSON with exactly '
                         'the keys vendor_id, product_id and name, e.g. '
                         '{"vendor_id": "8086", "product_id": "1572", '
                         '"name": "x710"}; the node gets the capability '
                         'name:<number of such devices>. Repeat the option '
                         'for more aliases.'),
]
ALIAS_KEYS = {'vendor_id', 'product_id', 'name'}


class PciDevicesHook(base.ProcessingHook):
    OPTIONS = [(GROUP, OPTS)]

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf)
        self.aliases = parse_aliases(conf.pci_devices.alias)

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        devices = data.get('pci_devices')
        if not isinstance(devices, list):
            if self.aliases:
                LOG.warning('No PCI devices information was received from '
                            'the ramdisk.')
            return
        counts = collections.Counter(
            self.aliases[key] for key in map(_key, devices)
            if key in self.aliases)
        if counts:
            LOG.info('Found the following PCI devices: %s', dict(counts))
            node.update_capabilities(**counts)


def parse_aliases(entries: Iterable[str]) -> dict[tuple[Any, Any], Any]:
    """``{(vendor_id, product_id): name}``; invalid entries are logged and
    left out, as upstream does."""
    aliases: dict[tuple[Any, Any], Any] = {}
    for entry in entries:
        try:
            alias = json.loads(entry)
            if not isinstance(alias, dict) or set(alias) != ALIAS_KEYS:
                raise ValueError("an alias has exactly the keys "
                                 "'vendor_id', 'product_id' and 'name'")
        except ValueError as exc:
            LOG.error('Error parsing [pci_devices] alias %r: %s', entry, exc)
            continue
        aliases[(alias['vendor_id'], alias['product_id'])] = alias['name']
    return aliases


def _key(device: object) -> tuple[Any, Any] | None:
    if not isinstance(device, dict):
        return None
    return device.get('vendor_id'), device.get('product_id')
