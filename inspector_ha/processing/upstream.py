"""Plugins written for ironic-inspector, run through an adapter.

A processing hook registered under upstream's namespace
``ironic_inspector.hooks.processing`` (named in ``processing_hooks``
like any other) is instantiated with no arguments and called with
upstream's signatures: ``before_processing(introspection_data)`` and
``before_update(introspection_data, node_info)``. ``node_info`` is a
:class:`NodeInfo`, whose methods *collect* changes into the worker's
:class:`~inspector_ha.processing.base.NodeContext` (nothing is sent to
Ironic from a hook, ``doc/guarantees.md`` D3b). A node-not-found hook
under ``ironic_inspector.hooks.node_not_found`` is a function of the
data. Any exception a plugin raises is a hook failure with its text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NoReturn

from stevedore import driver
from stevedore import named

from inspector_ha.common import retry
from inspector_ha.processing import base
from inspector_ha.processing import not_found

if TYPE_CHECKING:
    from oslo_config import cfg

    from inspector_ha.ironic import client as ironic_client
    from inspector_ha.ironic import node as ironic_node

LOG = logging.getLogger(__name__)
HOOKS = 'ironic_inspector.hooks.processing'
NOT_FOUND = 'ironic_inspector.hooks.node_not_found'


def processing_hooks(conf: cfg.ConfigOpts, names: list[str]
                     ) -> list[UpstreamHook]:
    """Adapters of the upstream hooks ``names``, in that order.

    :raises RuntimeError: a name upstream's namespace lacks too.
    """
    if not names:
        return []

    def missing(unknown: Iterable[str]) -> NoReturn:
        raise RuntimeError('Unknown processing hooks: %s'
                           % ', '.join(unknown))
    manager = named.NamedExtensionManager(
        HOOKS, names, invoke_on_load=True, name_order=True,
        on_missing_entrypoints_callback=missing,
        on_load_failure_callback=_failed)
    return [UpstreamHook(conf, ext.name, ext.obj) for ext in manager]


def _failed(manager: Any, entrypoint: Any, exc: BaseException
            ) -> NoReturn:
    raise RuntimeError('Processing hook %s cannot be loaded: %s' %
                       (entrypoint.name, exc)) from exc


def not_found_hook(conf: cfg.ConfigOpts, ironic: ironic_client.Ironic,
                   name: str) -> UpstreamNotFoundHook | None:
    """The upstream node-not-found hook ``name`` as an inspector-ha one,
    or None if upstream's namespace has no such name."""
    try:
        func: Callable[[dict[str, Any]], Any] = driver.DriverManager(
            NOT_FOUND, name).driver
    except Exception:
        return None
    return UpstreamNotFoundHook(conf, ironic, func)


class UpstreamHook(base.ProcessingHook):
    def __init__(self, conf: cfg.ConfigOpts, name: str, hook: Any) -> None:
        super().__init__(conf)
        self.name = name
        self.hook = hook

    def before_processing(self, data: dict[str, Any]) -> None:
        self._call(self.hook.before_processing, data)

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        self._call(self.hook.before_update, data, NodeInfo(node))

    def _call(self, method: Callable[..., Any], *args: Any) -> None:
        try:
            method(*args)
        except (base.HookError, *retry.UNAVAILABLE_OR_STOPPING):
            # NOTE: a backend gone or the process stopping is not the
            # hook's failure: the request is redelivered.
            raise
        except Exception as exc:
            LOG.warning('Upstream hook %s failed: %s', self.name, exc)
            raise base.HookError(str(exc)) from exc


class UpstreamNotFoundHook(not_found.NodeNotFoundHook):
    def __init__(self, conf: cfg.ConfigOpts, ironic: ironic_client.Ironic,
                 func: Callable[[dict[str, Any]], Any]) -> None:
        super().__init__(conf, ironic)
        self.func = func

    def __call__(self, data: dict[str, Any]) -> str | None:
        result = self.func(data)
        # NOTE: upstream's hooks return a NodeInfo; its uuid is the node.
        return getattr(result, 'uuid', result)


class NodeInfo:
    """Upstream's ``node_info`` for hooks, over a NodeContext."""

    def __init__(self, context: base.NodeContext) -> None:
        self._context = context
        self.uuid = context.uuid

    def node(self) -> ironic_node.Node:
        return self._context.node

    def ports(self) -> dict[str, _Port]:
        return {mac: _Port(port)
                for mac, port in self._context.ports().items()}

    def patch(self, patches: Iterable[dict[str, Any]], ironic: Any = None,
              **kwargs: Any) -> None:
        self._context.patch(list(patches))

    def update_properties(self, ironic: Any = None, **props: Any) -> None:
        for name, value in props.items():
            self._context.set_property(name, value)

    def update_capabilities(self, ironic: Any = None, **caps: Any
                            ) -> None:
        self._context.update_capabilities(**caps)

    def add_trait(self, trait: str, ironic: Any = None) -> None:
        self._context.traits.append(['add', trait])

    def remove_trait(self, trait: str, ironic: Any = None) -> None:
        self._context.traits.append(['remove', trait])

    def create_ports(self, ports: Iterable[str | dict[str, Any]],
                     ironic: Any = None) -> None:
        for port in ports:
            if isinstance(port, dict):
                self._context.create_port(port['mac'],
                                          pxe_enabled=port.get('pxe', True))
            else:
                self._context.create_port(port, pxe_enabled=True)

    def delete_port(self, port: Any, ironic: Any = None) -> None:
        self._context.delete_port(self._port(port))

    def patch_port(self, port: Any, patches: Iterable[dict[str, Any]],
                   ironic: Any = None) -> None:
        self._context.patch_port(self._port(port), list(patches))

    def _port(self, port: Any) -> ironic_client.Port:
        mac = port if isinstance(port, str) else port.address
        return self._context.ports()[mac.lower()]


class _Port:
    """An openstacksdk-like port: ``id``/``uuid``, ``address``,
    ``is_pxe_enabled``, ``local_link_connection``,
    ``physical_network``."""

    def __init__(self, port: ironic_client.Port) -> None:
        self.id = self.uuid = port.id
        self.address = port.address
        self.is_pxe_enabled = port.pxe_enabled
        self.local_link_connection = port.local_link_connection
        self.physical_network = port.physical_network
