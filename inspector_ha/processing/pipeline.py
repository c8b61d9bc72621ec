"""Loading processing hooks and running their two phases."""

import logging

from stevedore import named

from inspector_ha.processing import base

LOG = logging.getLogger(__name__)
NAMESPACE = 'inspector_ha.hooks.processing'


class Pipeline:
    def __init__(self, conf):
        names = [n.strip() for n in conf.processing.processing_hooks
                 .split(',') if n.strip()]
        manager = named.NamedExtensionManager(
            NAMESPACE, names, invoke_on_load=True, invoke_args=(conf,),
            name_order=True, on_missing_entrypoints_callback=_missing)
        self.hooks = [ext.obj for ext in manager]

    def before_processing(self, data):
        """Run every hook's first phase; return the failure messages."""
        failures = []
        for hook in self.hooks:
            try:
                hook.before_processing(data)
            except base.HookError as exc:
                failures.append(str(exc))
        return failures

    def before_update(self, data, node):
        for hook in self.hooks:
            hook.before_update(data, node)


def _missing(names):
    raise RuntimeError('Unknown processing hooks: %s' % ', '.join(names))
