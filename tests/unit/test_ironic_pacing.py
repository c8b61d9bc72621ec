"""[worker] ironic_slowdown: a worker process's tasks make fewer Ironic
calls at once while Ironic answers slowly, and more again once it
answers fast (doc/guarantees.md I2)."""

import contextlib
import threading

import pytest

import backends
from inspector_ha.common import retry
from inspector_ha.ironic import pacing as pacing_mod
from inspector_ha import service as service_mod
import members as members_mod

FAST, SLOW = 0.05, 0.5
POWER = 'set_node_power_state'


class Clock:
    """Seconds that move only when told."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _rounds(pacing, clock, seconds, count, at_once=1, kind=POWER):
    """``count`` rounds of ``at_once`` calls of ``kind`` answered
    together after ``seconds``."""
    for _ in range(count):
        with contextlib.ExitStack() as calls:
            for _ in range(at_once):
                # NOTE: a call beyond the limit would wait on a clock
                # that never moves.
                assert pacing._in_flight < pacing.limit
                calls.enter_context(pacing.call(kind))
            clock.now += seconds


def _paced(most=4, slowdown=4.0, cluster_least=1):
    clock = Clock()
    return pacing_mod.Pacing(most, slowdown, clock=clock,
                             cluster_least=cluster_least), clock


def _lowered_to_one(most):
    pacing, clock = _paced(most=most)
    _rounds(pacing, clock, FAST, 1)
    _rounds(pacing, clock, SLOW, 10)
    assert pacing.limit == 1
    return pacing, clock


def test_the_limit_starts_at_the_pool_size():
    pacing, _clock = _paced(most=4)
    assert pacing.limit == 4


def test_answers_far_slower_than_the_fastest_lower_the_limit_to_one():
    pacing, clock = _paced(most=8)
    _rounds(pacing, clock, FAST, 1)
    _rounds(pacing, clock, SLOW, 1)
    assert pacing.limit == 6
    _rounds(pacing, clock, SLOW, 10)
    assert pacing.limit == 1


def test_slow_answers_ending_within_one_slow_answers_time_lower_it_once():
    pacing, clock = _paced(most=4)
    _rounds(pacing, clock, FAST, 1)
    _rounds(pacing, clock, SLOW, 1, at_once=3)
    assert pacing.limit == 3


def test_answers_only_a_little_slower_do_not_lower_it():
    pacing, clock = _paced(most=4, slowdown=4.0)
    _rounds(pacing, clock, FAST, 1)
    _rounds(pacing, clock, FAST * 3.5, 20, at_once=4)
    assert pacing.limit == 4


def test_each_kind_of_call_is_compared_with_its_own_fastest_answer():
    pacing, clock = _paced(most=4)
    _rounds(pacing, clock, FAST, 1, kind='get_ports')
    _rounds(pacing, clock, SLOW, 1, kind='patch_node')
    _rounds(pacing, clock, SLOW * 1.5, 3, kind='patch_node')
    assert pacing.limit == 4


def test_a_call_whose_time_says_nothing_of_ironic_never_lowers_it():
    pacing, clock = _paced(most=4)
    _rounds(pacing, clock, FAST, 1, kind=None)
    _rounds(pacing, clock, SLOW, 5, kind=None)
    assert pacing.limit == 4


def test_a_failed_call_frees_its_room_and_leaves_the_fastest_answer():
    pacing, clock = _paced(most=2)
    _rounds(pacing, clock, SLOW, 1)
    for _ in range(3):
        with pytest.raises(ConnectionError):
            with pacing.call(POWER):
                clock.now += 0.001
                raise ConnectionError('refused')
    _rounds(pacing, clock, SLOW, 5, at_once=2)
    assert pacing.limit == 2
    assert pacing._in_flight == 0


@pytest.mark.parametrize('cluster_least, workers, least', [
    (2, 1, 2),   # a lone worker keeps two calls in flight
    (2, 3, 1),   # three workers keep three together, one each
    (5, 2, 3),   # rounded up
    (8, 1, 4),   # never more than the pool
    (1, 1, 1),
])
def test_a_worker_keeps_its_share_of_the_clusters_least_calls_when_slow(
        cluster_least, workers, least):
    pacing, clock = _paced(most=4, cluster_least=cluster_least)
    pacing.resize_for(workers)
    _rounds(pacing, clock, FAST, 1)
    _rounds(pacing, clock, SLOW, 10, at_once=least)
    assert pacing.least == least and pacing.limit == least


def test_fast_answers_at_the_limit_raise_it_step_by_step_to_the_pool():
    pacing, clock = _lowered_to_one(most=3)
    _rounds(pacing, clock, FAST, pacing_mod.RAISE_AFTER * 1)
    assert pacing.limit == 2
    _rounds(pacing, clock, FAST, pacing_mod.RAISE_AFTER * 2 - 1, at_once=2)
    assert pacing.limit == 2
    _rounds(pacing, clock, FAST, 100, at_once=2)
    assert pacing.limit == 3


def test_each_change_of_the_limit_is_logged_with_what_moved_it(caplog):
    caplog.set_level('DEBUG', logger=pacing_mod.__name__)
    pacing, clock = _lowered_to_one(most=2)
    _rounds(pacing, clock, FAST, pacing_mod.RAISE_AFTER)
    assert pacing.limit == 2
    assert [r.getMessage() for r in caplog.records] == [
        'Ironic calls at once: 1 (%s answered in 500 ms, over 4.0 times '
        'its fastest, 50 ms)' % POWER,
        'Ironic calls at once: 2 (4 fast answers in a row)']


def test_fast_answers_below_the_limit_do_not_raise_it():
    pacing, clock = _lowered_to_one(most=4)
    _rounds(pacing, clock, FAST, pacing_mod.RAISE_AFTER)
    assert pacing.limit == 2
    _rounds(pacing, clock, FAST, 100)  # one at a time, under a limit of 2
    assert pacing.limit == 2


def test_an_ironic_slower_for_good_becomes_the_norm_within_two_windows():
    pacing, clock = _lowered_to_one(most=2)
    _rounds(pacing, clock, SLOW, int(pacing_mod.WINDOW / SLOW))
    assert pacing.limit == 1
    _rounds(pacing, clock, SLOW, int(pacing_mod.WINDOW / SLOW))
    assert pacing.limit == 2


def test_the_fastest_answer_of_the_window_before_still_counts():
    pacing, clock = _paced(most=2)
    _rounds(pacing, clock, FAST, 1)
    clock.now += pacing_mod.WINDOW * 1.5
    _rounds(pacing, clock, SLOW, 1)
    assert pacing.limit == 1


def _hold_one_call(pacing):
    """A thread holding a call until the returned event is set."""
    entered, release = threading.Event(), threading.Event()

    def holder():
        with pacing.call(POWER):
            entered.set()
            release.wait(30)

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    assert entered.wait(10)
    return thread, release


def _call_in_thread(pacing):
    outcome = {}

    def caller():
        try:
            with pacing.call(POWER):
                outcome['made'] = True
        except retry.Interrupted:
            outcome['interrupted'] = True

    thread = threading.Thread(target=caller, daemon=True)
    thread.start()
    return thread, outcome


def test_a_least_value_above_the_limit_raises_it_and_admits_a_waiting_call(
        monkeypatch, caplog):
    monkeypatch.setattr(pacing_mod, '_SLICE', 60)  # only a notify wakes it
    caplog.set_level('DEBUG', logger=pacing_mod.__name__)
    pacing, clock = _paced(most=4, cluster_least=2)
    _rounds(pacing, clock, FAST, 1)
    _rounds(pacing, clock, SLOW, 10)
    assert pacing.limit == 1
    holder, release = _hold_one_call(pacing)
    waiter, outcome = _call_in_thread(pacing)
    waiter.join(0.3)
    assert waiter.is_alive() and 'made' not in outcome
    pacing.resize_for(1)
    backends.wait_for(lambda: outcome.get('made'), 10)
    assert pacing.limit == 2
    assert caplog.records[-1].getMessage() == (
        'Ironic calls at once: 2 (least_ironic_calls shared; live '
        'workers: 1)')
    release.set()
    holder.join(10)
    waiter.join(10)


def test_a_lone_worker_process_may_go_down_to_two_calls_then_one_as_two_join(
        service_conf):
    service_conf.set_override('watch_period', 0.1, group='coordination')
    service_conf.set_override('pool_size', 4, group='worker')
    svc = service_mod.Service(service_conf)
    others = []
    try:
        svc.start(workers=True, periodic_jobs=False)
        assert svc.pacing.least == 2  # [worker] least_ironic_calls
        assert 'slots' not in svc._shown()  # no cluster_concurrency
        for _ in range(2):
            others.append(members_mod.coordinator_at(
                service_conf.coordination.backend_url))
            members_mod.member(others[-1]).enter()
        backends.wait_for(lambda: svc.pacing.least == 1, 5)
    finally:
        for other in others:
            other.stop()
        svc.shutdown()


def test_a_call_beyond_the_limit_waits_until_one_in_flight_answers():
    pacing = pacing_mod.Pacing(1, 4.0)
    holder, release = _hold_one_call(pacing)
    waiter, outcome = _call_in_thread(pacing)
    waiter.join(0.3)
    assert waiter.is_alive() and 'made' not in outcome, (
        'the second call did not wait')
    release.set()
    backends.wait_for(lambda: outcome.get('made'), 10)
    holder.join(10)
    waiter.join(10)
    assert pacing._in_flight == 0


def test_a_waiting_call_stops_waiting_when_the_process_stops():
    stop = threading.Event()
    pacing = pacing_mod.Pacing(1, 4.0, stop)
    _holder, release = _hold_one_call(pacing)
    _waiter, outcome = _call_in_thread(pacing)
    stop.set()
    backends.wait_for(lambda: outcome.get('interrupted'), 10)
    release.set()


def test_a_call_waits_at_most_the_longest_wait_behind_a_hung_call(
        monkeypatch):
    monkeypatch.setattr(pacing_mod, 'LONGEST_WAIT', 0.5)
    pacing = pacing_mod.Pacing(1, 4.0)
    _holder, release = _hold_one_call(pacing)
    _waiter, outcome = _call_in_thread(pacing)
    backends.wait_for(lambda: outcome.get('made'), 10)
    release.set()


def test_with_pacing_off_a_worker_paces_nothing_and_shows_its_pool(
        monkeypatch):
    from inspector_ha.common import metrics

    class Opts:
        pace_ironic, pool_size, ironic_slowdown = False, 3, 4.0
        least_ironic_calls = 2

    assert service_mod._pacing(Opts, threading.Event()) is None
    assert metrics.IRONIC_CALLS_AT_ONCE._value.get() == 3
    Opts.pace_ironic = True
    assert service_mod._pacing(Opts, threading.Event()).limit == 3
