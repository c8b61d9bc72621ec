"""ramdisk_error: the ramdisk reported an error."""

from __future__ import annotations

from typing import Any

from inspector_ha.processing import base


class RamdiskErrorHook(base.ProcessingHook):
    def before_processing(self, data: dict[str, Any]) -> None:
        if data.get('error'):
            raise base.HookError('Ramdisk reported error: %s' % data['error'])
