"""root_disk_selection: local_gb from the root disk."""

from inspector_ha.processing import base

GiB = 1024 ** 3


class RootDiskSelectionHook(base.ProcessingHook):
    def before_update(self, data, node):
        root = data.get('root_disk') or _largest(data)
        local_gb = 0
        if root and root.get('size'):
            local_gb = int(root['size']) // GiB
            if local_gb and self.conf.processing.disk_partitioning_spacing:
                local_gb -= 1
        data['local_gb'] = local_gb
        node.set_property('local_gb', str(local_gb),
                          self.conf.processing.overwrite_existing)


def _largest(data):
    disks = (data.get('inventory') or {}).get('disks') or []
    sized = [d for d in disks if isinstance(d, dict) and d.get('size')]
    return max(sized, key=lambda d: int(d['size']), default=None)
