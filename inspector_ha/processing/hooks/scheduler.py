"""scheduler: cpus, cpu_arch and memory_mb for Nova's scheduler."""

from __future__ import annotations

import logging
from typing import Any

from inspector_ha.processing import base

LOG = logging.getLogger(__name__)


class SchedulerHook(base.ProcessingHook):
    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        inventory = data.get('inventory') or {}
        values = _values(inventory.get('cpu') or {},
                         inventory.get('memory') or {})
        overwrite = self.conf.processing.overwrite_existing
        for name, value in values.items():
            data[name] = value
            node.set_property(name, str(value), overwrite)


def _values(cpu: dict[str, Any], memory: dict[str, Any]
            ) -> dict[str, int | str]:
    values: dict[str, int | str] = {}
    try:
        values['cpus'] = int(cpu['count'])
        values['cpu_arch'] = str(cpu['architecture'])
    except (KeyError, TypeError, ValueError):
        LOG.warning('No valid CPU information in the inventory')
    try:
        values['memory_mb'] = int(memory['physical_mb'])
    except (KeyError, TypeError, ValueError):
        LOG.warning('No valid memory information in the inventory')
    return values
