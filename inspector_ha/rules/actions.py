"""Action plugins (entry points ``inspector_ha.rules.actions``).

``apply(target, params)`` acts on a :class:`~inspector_ha.processing.target.
NodeTarget`; the parameters named in ``FORMATTED_PARAMS`` have already
been formatted with the introspection data.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inspector_ha.processing import base
from inspector_ha.rules import plugins

if TYPE_CHECKING:
    from inspector_ha.processing import target as target_mod

LOG = logging.getLogger(__name__)


class Action(plugins.WithValidation):
    #: Parameters formatted with ``str.format(data=<introspection data>)``.
    FORMATTED_PARAMS: tuple[str, ...] = ()

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        raise NotImplementedError()


class ExampleAction(Action):
    """``example``: only logs."""

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        LOG.debug('Example action on node %s: %s', target.uuid, params)


class FailAction(Action):
    """``fail``: the introspection ends in error with ``message``."""

    REQUIRED_PARAMS = frozenset(['message'])

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        raise base.HookError(params['message'])


class SetAttributeAction(Action):
    """``set-attribute``: a JSON-patch ``add`` of ``value`` at ``path``.

    ``value`` is required but may be null. Changing ``/driver`` resets
    the hardware interfaces unless ``reset_interfaces`` is false.
    """

    REQUIRED_PARAMS = frozenset(['path'])
    OPTIONAL_PARAMS = frozenset(['value', 'reset_interfaces'])
    FORMATTED_PARAMS = ('value',)

    def validate(self, params: Mapping[str, Any]) -> None:
        if 'value' not in params:
            raise ValueError('missing required parameter(s): value')
        super().validate(params)

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        reset = (params['path'].strip('/') == 'driver'
                 and bool(params.get('reset_interfaces', True)))
        target.patch([{'op': 'add', 'path': params['path'],
                       'value': params['value']}], reset_interfaces=reset)


class SetCapabilityAction(Action):
    """``set-capability``: merges ``name:value`` into the capabilities;
    no ``value`` removes the capability."""

    REQUIRED_PARAMS = frozenset(['name'])
    OPTIONAL_PARAMS = frozenset(['value'])
    FORMATTED_PARAMS = ('value',)

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        target.update_capabilities(**{params['name']: params.get('value')})


class ExtendAttributeAction(Action):
    """``extend-attribute``: appends ``value`` to the list at ``path``
    (an empty list when there is none); with ``unique``, only once."""

    REQUIRED_PARAMS = frozenset(['path', 'value'])
    OPTIONAL_PARAMS = frozenset(['unique'])
    FORMATTED_PARAMS = ('value',)

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        def extend(values: list[Any]) -> list[Any]:
            if not params.get('unique') or params['value'] not in values:
                values.append(params['value'])
            return values
        target.replace_field(params['path'], extend, default=[])


class AddTraitAction(Action):
    REQUIRED_PARAMS = frozenset(['name'])

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        target.add_trait(params['name'])


class RemoveTraitAction(Action):
    REQUIRED_PARAMS = frozenset(['name'])

    def apply(self, target: target_mod.NodeTarget,
              params: Mapping[str, Any]) -> None:
        target.remove_trait(params['name'])
