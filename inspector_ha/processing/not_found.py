"""The node-not-found hook (entry points
``inspector_ha.hooks.node_not_found``).

It runs in the API process when ramdisk data matches no node under
introspection and the pre-processing hooks found nothing wrong. It returns
the UUID of the Ironic node the data is for (``enroll`` creates it), or
raises :class:`~inspector_ha.processing.base.HookError` to refuse the data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stevedore import driver

from inspector_ha.processing import base

if TYPE_CHECKING:
    from oslo_config import cfg

    from inspector_ha.ironic import client as ironic_client

NAMESPACE = 'inspector_ha.hooks.node_not_found'


class NodeNotFoundHook(base.OwnOptions):
    def __init__(self, conf: cfg.ConfigOpts,
                 ironic: ironic_client.Ironic) -> None:
        self.register_opts(conf)
        self.conf = conf
        self.ironic = ironic

    def __call__(self, data: dict[str, Any]) -> str | None:
        raise NotImplementedError


def load(conf: cfg.ConfigOpts, ironic: ironic_client.Ironic
         ) -> NodeNotFoundHook | None:
    """The hook named by ``[processing] node_not_found_hook``, or None.

    :raises RuntimeError: no such hook.
    """
    name = conf.processing.node_not_found_hook
    if not name:
        return None
    try:
        # NOTE: stevedore's types infer no plugin type from a namespace.
        manager: Any = driver.DriverManager(
            NAMESPACE, name, invoke_on_load=True, invoke_args=(conf, ironic))
        return manager.driver
    except Exception as exc:
        # NOTE: or a hook written for ironic-inspector, adapted.
        from inspector_ha.processing import upstream
        adapted = upstream.not_found_hook(conf, ironic, name)
        if adapted is not None:
            return adapted
        raise RuntimeError('Node-not-found hook %s cannot be loaded: %s' %
                           (name, exc)) from exc
