"""ramdisk_error: the ramdisk reported an error."""

from inspector_ha.processing import base


class RamdiskErrorHook(base.ProcessingHook):
    def before_processing(self, data):
        if data.get('error'):
            raise base.HookError('Ramdisk reported error: %s' % data['error'])
