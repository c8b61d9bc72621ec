"""The checker is not vacuous: each invariant finds a violation planted in
an otherwise valid history. No backend needed."""

import collections
import types

import pytest

import history

NODE = '9d7c0f3e-1111-4c3a-9a3e-000000000001'
START, PROCESS = 'req-start', 'req-process'


def _t(id_, request, event, frm, to, generation, actor='worker-0.1'):
    return types.SimpleNamespace(
        id=id_, node_uuid=NODE, request_id=request, event=event,
        from_state=frm, to_state=to, generation=generation, actor=actor)


def _valid():
    committed = [
        _t(1, START, 'start', None, 'starting', 1, actor='api-0.9'),
        _t(2, START, 'wait', 'starting', 'waiting', 2),
        _t(3, PROCESS, 'process', 'waiting', 'processing', 3),
        _t(4, PROCESS, 'finish', 'processing', 'finished', 4)]
    attempts = [{'request': r.request_id, 'node': NODE, 'generation':
                 r.generation, 'actor': r.actor, 'outcome': 'committed'}
                for r in committed[1:]]
    ledger = [types.SimpleNamespace(id=i, node_uuid=NODE, event=e,
                                    status='done', deliveries=1)
              for i, e in ((START, 'start'), (PROCESS, 'process'))]
    run = types.SimpleNamespace
    return history.History(
        nodes={NODE: types.SimpleNamespace(state='finished', error=None,
                                           attempt=1)},
        committed=committed, ledger=ledger,
        runs=[run(task='timeout', member='worker-0.1', epoch=1),
              run(task='timeout', member='worker-1.2', epoch=2)],
        leaders=[run(name='timeout', epoch=2, holder='worker-1.2')],
        attempts=attempts, power_ons=collections.Counter({NODE: 1}),
        power_offs=collections.Counter({NODE: 1}),
        accepted={NODE}, statuses={NODE: {'finished': True,
                                          'state': 'finished'}},
        exits={'worker-0': 0, 'api-0': 0},
        logs={'worker-0': '', 'api-0': ''}, killed=set(),
        killed_members=set())


def test_a_valid_history_has_no_violation():
    assert history.check(_valid()) == []


def _plant(change):
    record = _valid()
    change(record)
    return history.check(record)


def _skip_a_state(h):
    h.committed[2] = _t(3, PROCESS, 'process', 'starting', 'processing', 3)


def _commit_twice(h):
    h.committed.append(_t(5, PROCESS, 'process', 'waiting', 'processing',
                          5))


def _epoch_goes_back(h):
    h.runs.append(types.SimpleNamespace(task='timeout', member='worker-0.1',
                                        epoch=1))


def _stuck(h):
    h.ledger[1].status = 'applied'


def _lost(h):
    del h.ledger[0]


def _error_without_reason(h):
    h.statuses[NODE] = {'finished': True, 'state': 'error', 'error': None}


def _power_on_twice(h):
    h.power_ons[NODE] = 2


def _power_off_twice(h):
    h.power_offs[NODE] = 2


def _commit_not_logged(h):
    del h.attempts[0]


def _logged_commit_lost(h):
    h.attempts.append(dict(h.attempts[0], generation=7))


def _crash_exit(h):
    h.exits['worker-0'] = 1


@pytest.mark.parametrize('change', [
    _skip_a_state, _commit_twice, _epoch_goes_back, _stuck, _lost,
    _error_without_reason, _power_on_twice, _power_off_twice,
    _commit_not_logged,
    _logged_commit_lost, _crash_exit])
def test_each_planted_violation_is_found(change):
    assert len(_plant(change)) >= 1


def test_a_commit_missing_from_a_killed_workers_log_is_excused():
    record = _valid()
    del record.attempts[0]
    record.killed_members = {'worker-0.1'}
    assert history.check(record) == []


def test_a_clean_exit_after_a_lost_backend_is_no_violation():
    record = _valid()
    record.exits['worker-0'] = 1
    record.logs['worker-0'] = 'ERROR Stopping the service: queue unavailable'
    assert history.check(record) == []
