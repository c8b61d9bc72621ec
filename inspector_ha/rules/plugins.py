"""Condition and action plugins (stevedore entry points) and their
parameter validation, as upstream's ``WithValidation``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from stevedore import extension

if TYPE_CHECKING:
    from inspector_ha.rules import actions
    from inspector_ha.rules import conditions

CONDITIONS = 'inspector_ha.rules.conditions'
ACTIONS = 'inspector_ha.rules.actions'


class InvalidRule(Exception):
    """A rule refused at creation; the API answers 400 with its text."""


class WithValidation:
    """Checks a plugin's parameters: all required ones, no unknown one.

    A parameter whose value is ``None`` counts as not passed.
    """

    REQUIRED_PARAMS: frozenset[str] = frozenset()
    OPTIONAL_PARAMS: frozenset[str] = frozenset()

    def validate(self, params: Mapping[str, Any]) -> None:
        """:raises ValueError: with upstream's text."""
        passed = {k for k, v in params.items() if v is not None}
        missing = self.REQUIRED_PARAMS - passed
        unexpected = passed - self.REQUIRED_PARAMS - self.OPTIONAL_PARAMS
        problems: list[str] = []
        if missing:
            problems.append('missing required parameter(s): %s'
                            % ', '.join(sorted(missing)))
        if unexpected:
            problems.append('unexpected parameter(s): %s'
                            % ', '.join(sorted(unexpected)))
        if problems:
            raise ValueError('; '.join(problems))


class Plugins:
    """The loaded condition and action plugins, by name."""

    def __init__(self, upstream_plugins: bool = True) -> None:
        """``upstream_plugins``: also those registered for ironic-inspector
        (:mod:`inspector_ha.rules.upstream`)."""
        # NOTE: imported here: the adapters subclass our plugin classes.
        from inspector_ha.rules import upstream
        self._conditions: dict[str, conditions.Condition] = _load(
            CONDITIONS)
        self._actions: dict[str, actions.Action] = _load(ACTIONS)
        if not upstream_plugins:
            return
        self._conditions.update(upstream.load(
            upstream.CONDITIONS, upstream.UpstreamCondition,
            self._conditions))
        self._actions.update(upstream.load(
            upstream.ACTIONS, upstream.UpstreamAction, self._actions))

    @property
    def condition_names(self) -> list[str]:
        return sorted(self._conditions)

    @property
    def action_names(self) -> list[str]:
        return sorted(self._actions)

    def condition(self, name: str) -> conditions.Condition:
        return self._conditions[name]

    def action(self, name: str) -> actions.Action:
        return self._actions[name]


def _load(namespace: str) -> dict[str, Any]:
    manager = extension.ExtensionManager(
        namespace, invoke_on_load=True, on_load_failure_callback=_failed)
    return {ext.name: ext.obj for ext in manager}


def _failed(_manager: Any, entry_point: Any, exc: BaseException
            ) -> NoReturn:
    raise RuntimeError('Cannot load rule plugin %s: %s' %
                       (entry_point, exc)) from exc
