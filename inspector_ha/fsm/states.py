"""The introspection state machine, declared as data. No I/O here.

States and events are upstream ironic-inspector's. Transitions follow the
transition function of doc/design.md: an event redelivered after its transition
was applied meets the *target* state again, so every reentrant event has a
self-loop on its target, and the one strict event (``process``, the design's
``Continue!``) leads from its target to ``error`` instead: a ramdisk's data is
never processed twice (the "deja vu" rule).
``timeout`` has no self-loop on ``error`` on purpose, so a late timeout
never overwrites a real error; a redelivered timeout whose transition was
applied is recognised by the request ledger instead.

Deviations from upstream, on purpose:

* ``waiting --error--> error`` and ``aborting --error--> error`` exist, so a
  ramdisk-reported error ends the introspection with its message instead of
  leaving the node in ``waiting`` until the timeout.
* ``starting --abort--> aborting``: an operator can abort a node that is
  still being set up.
* ``starting --start--> starting`` and ``aborting --abort--> aborting``: the
  worker-side reentrant self-loops of doc/design.md.
"""

from __future__ import annotations

from automaton import machines

STARTING = 'starting'
WAITING = 'waiting'
PROCESSING = 'processing'
FINISHED = 'finished'
ERROR = 'error'
REAPPLYING = 'reapplying'
ENROLLING = 'enrolling'
ABORTING = 'aborting'

STATES = (STARTING, WAITING, PROCESSING, FINISHED, ERROR, REAPPLYING,
          ENROLLING, ABORTING)

START = 'start'
WAIT = 'wait'
PROCESS = 'process'
FINISH = 'finish'
FAIL = 'error'
TIMEOUT = 'timeout'
ABORT = 'abort'
ABORT_END = 'abort_end'
REAPPLY = 'reapply'

EVENTS = (START, WAIT, PROCESS, FINISH, FAIL, TIMEOUT, ABORT, ABORT_END,
          REAPPLY)

#: Not a machine event: a request that deletes the node's row (the data
#: cleanup of a node gone from Ironic).
DELETE = 'delete'

#: Events that must not be applied twice; met again, they lead to error.
STRICT_EVENTS = frozenset([PROCESS])

#: States in which an introspection is over; entering one sets finished_at
#: and drops the node's lookup attributes.
FINAL_STATES = frozenset([FINISHED, ERROR])

#: States from which the API may start a new introspection.
STARTABLE_STATES = frozenset([WAITING, FINISHED, ERROR])

TRANSITIONS: dict[str, dict[str, str]] = {
    STARTING: {START: STARTING, WAIT: WAITING, ABORT: ABORTING,
               FAIL: ERROR, TIMEOUT: ERROR},
    WAITING: {WAIT: WAITING, PROCESS: PROCESSING, ABORT: ABORTING,
              START: STARTING, FAIL: ERROR, TIMEOUT: ERROR},
    PROCESSING: {PROCESS: ERROR, FINISH: FINISHED, FAIL: ERROR,
                 TIMEOUT: ERROR},
    FINISHED: {FINISH: FINISHED, REAPPLY: REAPPLYING, START: STARTING},
    ERROR: {START: STARTING, REAPPLY: REAPPLYING, ABORT: ERROR,
            FAIL: ERROR},
    REAPPLYING: {REAPPLY: REAPPLYING, FINISH: FINISHED, FAIL: ERROR,
                 TIMEOUT: ERROR},
    ENROLLING: {PROCESS: PROCESSING, FAIL: ERROR, TIMEOUT: ERROR},
    ABORTING: {ABORT: ABORTING, ABORT_END: ERROR, FAIL: ERROR,
               TIMEOUT: ERROR},
}

STATE_SPACE: list[machines.StateDict] = [
    {'name': state, 'next_states': dict(TRANSITIONS[state])}
    for state in STATES]


def _build() -> machines.FiniteMachine:
    machine = machines.FiniteMachine.build(STATE_SPACE)
    machine.default_start_state = FINISHED
    machine.freeze()
    return machine


MACHINE = _build()


def target(state: str, event: str) -> str | None:
    """Return the state ``event`` leads to from ``state``, or None."""
    return TRANSITIONS.get(state, {}).get(event)


def is_deja_vu(state: str, event: str) -> bool:
    """Whether ``event`` is a strict event met again in its own target."""
    return event in STRICT_EVENTS and state in _targets_of(event)


def _targets_of(event: str) -> set[str]:
    return {nxt[event] for nxt in TRANSITIONS.values()
            if event in nxt and nxt[event] != ERROR}
