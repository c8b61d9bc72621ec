"""Rehydrating the frozen machine at a state loaded from SQL."""

from __future__ import annotations

from typing import cast

from automaton import exceptions as automaton_exc

from inspector_ha.fsm import states


class IllegalTransition(Exception):
    """The event is not allowed in the node's current state."""

    def __init__(self, state: str, event: str) -> None:
        super().__init__('Can not transition from state %r on event %r '
                         '(no defined transition)' % (state, event))
        self.state = state
        self.event = event


def advance(state: str, event: str) -> str:
    """Return the target of ``event`` from ``state`` using the automaton.

    :raises IllegalTransition: the machine is jammed for this event.
    """
    machine = states.MACHINE.copy(shallow=True)
    machine.initialize(state)
    try:
        machine.process_event(event)
    except automaton_exc.NotFound:
        raise IllegalTransition(state, event) from None
    # NOTE: initialized above, so never None.
    return cast(str, machine.current_state)
