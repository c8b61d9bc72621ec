"""capabilities: boot mode and CPU flags as node capabilities."""

from __future__ import annotations

import logging
from typing import Any

from oslo_config import cfg

from inspector_ha.processing import base

LOG = logging.getLogger(__name__)

GROUP = 'capabilities'

DEFAULT_CPU_FLAGS = {'vmx': 'cpu_vt', 'svm': 'cpu_vt', 'aes': 'cpu_aes',
                     'pse': 'cpu_hugepages', 'pdpe1gb': 'cpu_hugepages_1g',
                     'smx': 'cpu_txt'}

OPTS = [
    cfg.BoolOpt('boot_mode', default=False,
                help='Whether to set the boot_mode capability (bios or '
                     'uefi) from the ramdisk\'s current boot mode.'),
    cfg.DictOpt('cpu_flags', default=DEFAULT_CPU_FLAGS,
                help='CPU flag to capability map: a capability is set to '
                     '"true" when the CPU has the flag.'),
]


class CapabilitiesHook(base.ProcessingHook):
    OPTIONS = [(GROUP, OPTS)]

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        inventory = _section(data, 'inventory')
        caps: dict[str, Any] = {}
        if self.conf.capabilities.boot_mode:
            caps.update(_boot_mode(inventory))
        caps.update(_cpu_flags(inventory, self.conf.capabilities.cpu_flags))
        if caps:
            node.update_capabilities(**caps)


def _boot_mode(inventory: dict[str, Any]) -> dict[str, Any]:
    mode = _section(inventory, 'boot').get('current_boot_mode')
    if mode is None:
        LOG.warning('No boot mode information available')
        return {}
    return {'boot_mode': mode}


def _cpu_flags(inventory: dict[str, Any], mapping: dict[str, str]
               ) -> dict[str, str]:
    flags = _section(inventory, 'cpu').get('flags')
    if not flags or not isinstance(flags, list):
        LOG.warning('No CPU flags available, please update your '
                    'introspection ramdisk')
        return {}
    flags = {f for f in flags if isinstance(f, str)}
    return {name: 'true' for flag, name in mapping.items() if flag in flags}


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    return value if isinstance(value, dict) else {}
