"""The node-not-found hook (entry points
``inspector_ha.hooks.node_not_found``).

It runs in the API process when ramdisk data matches no node under
introspection and the pre-processing hooks found nothing wrong. It returns
the UUID of the Ironic node the data is for (``enroll`` creates it), or
raises :class:`~inspector_ha.processing.base.HookError` to refuse the data.
"""

from stevedore import driver

NAMESPACE = 'inspector_ha.hooks.node_not_found'


class NodeNotFoundHook:
    def __init__(self, conf, ironic):
        self.conf = conf
        self.ironic = ironic

    def __call__(self, data):
        raise NotImplementedError


def load(conf, ironic):
    """The hook named by ``[processing] node_not_found_hook``, or None.

    :raises RuntimeError: no such hook.
    """
    name = conf.processing.node_not_found_hook
    if not name:
        return None
    try:
        return driver.DriverManager(NAMESPACE, name, invoke_on_load=True,
                                    invoke_args=(conf, ironic)).driver
    except Exception as exc:
        # NOTE: or a hook written for ironic-inspector, adapted.
        from inspector_ha.processing import upstream
        adapted = upstream.not_found_hook(conf, ironic, name)
        if adapted is not None:
            return adapted
        raise RuntimeError('Node-not-found hook %s cannot be loaded: %s' %
                           (name, exc)) from exc
