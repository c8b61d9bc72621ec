"""The introspection state machine declared in ``fsm/states.py``."""

import collections
import itertools

from automaton import exceptions as automaton_exc
import pytest

from inspector_ha.fsm import machine
from inspector_ha.fsm import states as st

#: Upstream's table, dumped from its FSM (reference report, section 2.1).
UPSTREAM = {
    'starting': {'wait': 'waiting', 'error': 'error', 'timeout': 'error'},
    'waiting': {'process': 'processing', 'abort': 'aborting',
                'start': 'starting', 'timeout': 'error'},
    'processing': {'finish': 'finished', 'error': 'error',
                   'timeout': 'error'},
    'finished': {'finish': 'finished', 'reapply': 'reapplying',
                 'start': 'starting'},
    'error': {'start': 'starting', 'reapply': 'reapplying',
              'abort': 'error', 'error': 'error'},
    'reapplying': {'finish': 'finished', 'reapply': 'reapplying',
                   'error': 'error', 'timeout': 'error'},
    'enrolling': {'process': 'processing', 'error': 'error',
                  'timeout': 'error'},
    'aborting': {'abort_end': 'error', 'timeout': 'error'},
}

#: The deviations listed in the states.py docstring.
DEVIATIONS = [('waiting', 'error', 'error'), ('aborting', 'error', 'error'),
              ('starting', 'abort', 'aborting'),
              ('starting', 'start', 'starting'),
              ('aborting', 'abort', 'aborting')]

#: What the docstring's transition rule adds: the self-loop of a reentrant
#: event on its target, and the strict event from its target to error.
RULE = [('waiting', 'wait', 'waiting'), ('processing', 'process', 'error')]

#: Events the request ledger can hold, i.e. that can be delivered again.
REQUEST_EVENTS = ('start', 'process', 'abort', 'error', 'timeout',
                  'reapply')

PAIRS = list(itertools.product(st.STATES, st.EVENTS))


def test_states_and_events_are_upstreams():
    assert set(st.STATES) == set(UPSTREAM)
    assert set(st.EVENTS) == {'start', 'wait', 'process', 'finish', 'error',
                              'timeout', 'abort', 'abort_end', 'reapply'}


def test_every_upstream_transition_is_present():
    missing = [(state, event, target)
               for state, row in UPSTREAM.items()
               for event, target in row.items()
               if st.TRANSITIONS[state].get(event) != target]
    assert missing == []


def test_the_table_is_upstream_plus_the_documented_deviations_only():
    expected = {state: dict(row) for state, row in UPSTREAM.items()}
    for state, event, target in DEVIATIONS + RULE:
        expected[state][event] = target
    assert st.TRANSITIONS == expected


def test_every_documented_deviation_is_in_the_table():
    for state, event, target in DEVIATIONS:
        assert st.target(state, event) == target, (state, event)


@pytest.mark.parametrize('state,event', PAIRS)
def test_the_automaton_agrees_with_the_transitions_dict(state, event):
    expected = st.TRANSITIONS[state].get(event)
    if expected is None:
        with pytest.raises(machine.IllegalTransition):
            machine.advance(state, event)
    else:
        assert machine.advance(state, event) == expected
    assert st.target(state, event) == expected


def test_an_illegal_event_raises_illegal_transition_with_upstreams_text():
    with pytest.raises(machine.IllegalTransition) as info:
        machine.advance(st.WAITING, st.FINISH)
    assert info.value.state == 'waiting'
    assert info.value.event == 'finish'
    assert str(info.value) == ("Can not transition from state 'waiting' on "
                               "event 'finish' (no defined transition)")


def test_an_unknown_event_is_an_illegal_transition():
    with pytest.raises(machine.IllegalTransition):
        machine.advance(st.WAITING, 'no-such-event')


def test_an_unknown_state_is_refused_by_the_automaton():
    with pytest.raises(automaton_exc.NotFound):
        machine.advance('no-such-state', st.START)


def test_advancing_leaves_the_shared_machine_untouched():
    machine.advance(st.WAITING, st.PROCESS)
    machine.advance(st.PROCESSING, st.FINISH)
    assert st.MACHINE.current_state is None
    assert st.MACHINE.frozen


def test_the_default_start_state_is_finished_as_upstream():
    assert st.MACHINE.default_start_state == st.FINISHED


@pytest.mark.parametrize('state,event', PAIRS)
def test_only_a_strict_event_met_again_in_its_target_is_deja_vu(state,
                                                                 event):
    expected = (state, event) == (st.PROCESSING, st.PROCESS)
    assert st.is_deja_vu(state, event) is expected


def test_a_strict_event_met_again_leads_to_error():
    for event in st.STRICT_EVENTS:
        targets = {row[event] for row in st.TRANSITIONS.values()
                   if row.get(event) not in (None, st.ERROR)}
        assert targets
        for target in targets:
            assert machine.advance(target, event) == st.ERROR


@pytest.mark.parametrize('event', [
    e for e in REQUEST_EVENTS if e not in st.STRICT_EVENTS | {'timeout'}])
def test_a_reentrant_event_met_again_in_its_target_loops_there(event):
    targets = {row[event] for row in st.TRANSITIONS.values() if event in row}
    for target in targets:
        assert st.target(target, event) == target, target


def test_a_timeout_has_no_self_loop_so_it_never_overwrites_a_real_error():
    # NOTE: a redelivered, already applied timeout is recognised by the
    # ledger (the worker marks it done), not by the machine.
    assert st.target(st.ERROR, st.TIMEOUT) is None


def test_every_state_is_reachable_from_the_start_of_an_introspection():
    assert _reachable(st.STARTING) | {st.STARTING} >= set(st.STATES) - {
        st.ENROLLING}


def test_every_state_is_reachable_from_some_state():
    targets = {t for row in st.TRANSITIONS.values() for t in row.values()}
    # NOTE: enrolling is entered by discovery, which creates the row in it.
    assert targets | {st.ENROLLING} == set(st.STATES)
    assert _reachable(st.ENROLLING) >= set(st.FINAL_STATES)


def test_every_active_state_can_end():
    for state in st.STATES:
        assert _reachable(state) & st.FINAL_STATES, state


def test_a_start_is_allowed_from_every_startable_state():
    for state in st.STARTABLE_STATES:
        assert st.target(state, st.START) == st.STARTING


def test_final_states_are_finished_and_error():
    assert st.FINAL_STATES == {st.FINISHED, st.ERROR}


def test_the_state_space_is_built_from_the_table():
    assert {s['name']: s['next_states'] for s in st.STATE_SPACE} == \
        st.TRANSITIONS


def _reachable(start):
    seen, queue = set(), collections.deque([start])
    while queue:
        for target in st.TRANSITIONS[queue.popleft()].values():
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen
