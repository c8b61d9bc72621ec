"""root_disk_selection: the root disk and local_gb, as upstream.

With root-device hints in the node's ``properties/root_device``, the
root disk is the first disk of the inventory matching them, after
removing the disks matched by any hint in ``properties/
skip_block_devices``; hints matching no disk, or invalid hints, fail the
introspection. Without hints the root disk is the one the ramdisk
reported (``root_disk``). No root disk: ``local_gb`` 0 (diskless).
"""

from __future__ import annotations

import logging
from typing import Any

from inspector_ha.processing import base
from inspector_ha.processing import hints as hints_mod

LOG = logging.getLogger(__name__)
GiB = hints_mod.GiB
NO_MATCH = 'No disks satisfied root device hints'
INVALID = ('No disks could be found using the root device hints %s '
           'because they failed to validate. Error: %s')


class RootDiskSelectionHook(base.ProcessingHook):
    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        hints = node.properties.get('root_device')
        if hints:
            data['root_disk'] = _by_hints(data, node, hints)
        local_gb = self._local_gb(node.uuid, data.get('root_disk'))
        data['local_gb'] = local_gb
        node.set_property('local_gb', str(local_gb),
                          self.conf.processing.overwrite_existing)

    def _local_gb(self, uuid: str, root: Any) -> int:
        if not isinstance(root, dict):
            LOG.info('Node %s: no root device found, assuming a diskless '
                     'node', uuid)
            return 0
        try:
            local_gb = int(root.get('size') or 0) // GiB
        except (TypeError, ValueError):
            local_gb = 0
        if not local_gb:
            LOG.warning('Node %s: the root disk is smaller than 1 GiB or '
                        'its size is unknown: %s', uuid, root)
            return 0
        if self.conf.processing.disk_partitioning_spacing:
            local_gb -= 1
        return local_gb


def _by_hints(data: dict[str, Any], node: base.NodeContext, hints: Any
              ) -> dict[str, Any]:
    disks = [d for d in (data.get('inventory') or {}).get('disks') or []
             if isinstance(d, dict)]
    try:
        parsed = hints_mod.parse(hints)
        disks = _without_skipped(node, disks)
        found = hints_mod.find(disks, parsed)
    except hints_mod.HintError as exc:
        raise base.HookError(INVALID % (hints, exc)) from None
    if not found:
        raise base.HookError(NO_MATCH)
    LOG.info('Node %s: disk %s (size %s) satisfies the root device hints',
             node.uuid, found[0].get('name'), found[0].get('size'))
    return found[0]


def _without_skipped(node: base.NodeContext, disks: list[dict[str, Any]]
                     ) -> list[dict[str, Any]]:
    skip = node.properties.get('skip_block_devices') or []
    if not isinstance(skip, list):
        raise hints_mod.HintError('skip_block_devices must be a list of '
                                  'hints, got %r' % (skip,))
    skipped: set[Any] = set()
    for hint in skip:
        names = {d.get('name') for d in
                 hints_mod.find(disks, hints_mod.parse(hint))}
        if names - skipped:
            LOG.warning('Node %s: hint %s skips devices %s', node.uuid,
                        hint, ', '.join(sorted(map(str, names - skipped))))
        skipped |= names
    return [d for d in disks if d.get('name') not in skipped]
