"""Rule conditions and actions written for ironic-inspector, adapted.

Plugins registered under upstream's namespaces
``ironic_inspector.rules.conditions`` and ``ironic_inspector.rules.actions``
are loaded (for names inspector-ha's own namespaces lack) and called with
upstream's signatures: ``check(node_info, field, params)`` and
``apply(node_info, params)``, ``validate(params)``; their
``REQUIRED_PARAMS``, ``OPTIONAL_PARAMS``, ``ALLOW_NONE`` and
``FORMATTED_PARAMS`` are honoured. ``node_info`` collects into the rule
target (see :mod:`inspector_ha.processing.upstream` for hooks); a
condition gets None as ``node_info`` (ours see only the field). Any
exception a plugin raises is a rule failure with its text.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from openstack.baremetal.v1 import node as ironic_node_mod
from stevedore import extension

from inspector_ha.processing import base
from inspector_ha.rules import actions
from inspector_ha.rules import conditions

if TYPE_CHECKING:
    from inspector_ha.processing import target as target_mod

_Adapter = TypeVar('_Adapter')

CONDITIONS = 'ironic_inspector.rules.conditions'
ACTIONS = 'ironic_inspector.rules.actions'


def load(namespace: str, wrap: Callable[[Any], _Adapter],
         known: Container[str]) -> dict[str, _Adapter]:
    manager = extension.ExtensionManager(namespace, invoke_on_load=True,
                                         on_load_failure_callback=_failed)
    return {ext.name: wrap(ext.obj) for ext in manager
            if ext.name not in known}


def _failed(_manager: Any, entry_point: Any, exc: BaseException
            ) -> NoReturn:
    raise RuntimeError('Cannot load rule plugin %s: %s' %
                       (entry_point, exc)) from exc


def _copy_attributes(adapter: object, plugin: object,
                     names: Iterable[str]) -> None:
    for name in names:
        if hasattr(plugin, name):
            setattr(adapter, name, getattr(plugin, name))


def _calling(func: Callable[..., Any], *args: Any) -> Any:
    try:
        return func(*args)
    except base.HookError:
        raise
    except Exception as exc:
        raise base.HookError(str(exc)) from exc


class UpstreamCondition(conditions.Condition):
    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        _copy_attributes(self, plugin, ('REQUIRED_PARAMS', 'OPTIONAL_PARAMS',
                                        'ALLOW_NONE'))

    def validate(self, params: Mapping[str, Any]) -> None:
        self.plugin.validate(params)

    def check(self, field: Any, params: Mapping[str, Any]) -> object:
        return _calling(self.plugin.check, None, field, params)


class UpstreamAction(actions.Action):
    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        _copy_attributes(self, plugin, ('REQUIRED_PARAMS', 'OPTIONAL_PARAMS',
                                        'FORMATTED_PARAMS'))

    def validate(self, params: Mapping[str, Any]) -> None:
        self.plugin.validate(params)

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        _calling(self.plugin.apply, RuleNodeInfo(target), params)


class RuleNodeInfo:
    """Upstream's ``node_info`` for rule actions, over a rule target."""

    def __init__(self, target: target_mod.NodeTarget) -> None:
        self._target = target
        self.uuid = target.uuid

    def node(self) -> Any:
        return ironic_node_mod.Node.existing(**self._target.view)

    def patch(self, patches: Iterable[dict[str, Any]], ironic: Any = None,
              **kwargs: Any) -> None:
        self._target.patch(list(patches))

    def update_properties(self, ironic: Any = None, **props: Any) -> None:
        self._target.patch([{'op': 'add', 'path': '/properties/%s' % k,
                             'value': v} for k, v in props.items()])

    def update_capabilities(self, ironic: Any = None, **caps: Any) -> None:
        self._target.update_capabilities(**caps)

    def add_trait(self, trait: str, ironic: Any = None) -> None:
        self._target.add_trait(trait)

    def remove_trait(self, trait: str, ironic: Any = None) -> None:
        self._target.remove_trait(trait)

    def replace_field(self, path: str, func: Callable[[Any], Any],
                      **kwargs: Any) -> None:
        self._target.replace_field(path, func, kwargs.get('default'))
