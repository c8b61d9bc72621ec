"""[worker] ironic_slowdown: a worker process's tasks make fewer Ironic
calls at once while Ironic answers slowly, and more again once it
answers fast (doc/guarantees.md I2)."""

import threading

import backends
from inspector_ha.ironic import pacing as pacing_mod

FAST, SLOW = 0.05, 0.5


class Clock:
    """Seconds that move only when told."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _answers(pacing, clock, seconds, count, kind='set_power_state'):
    """``count`` answers of ``seconds`` each, the clock moving past each
    one's calm window."""
    for _ in range(count):
        clock.now += seconds
        with pacing._changed:
            pacing._in_flight += 1
        pacing.answered(kind, seconds)


def _paced(most=4, slowdown=4.0):
    clock = Clock()
    return pacing_mod.Pacing(most, slowdown, clock), clock


def test_the_limit_starts_at_the_pool_size():
    pacing, _clock = _paced(most=4)
    assert pacing.limit == 4


def test_answers_far_slower_than_the_fastest_lower_the_limit_to_one():
    pacing, clock = _paced(most=4)
    _answers(pacing, clock, FAST, 1)
    _answers(pacing, clock, SLOW, 2)
    assert pacing.limit == 2
    _answers(pacing, clock, SLOW, 10)
    assert pacing.limit == 1


def test_slow_answers_within_one_slow_answers_duration_lower_it_once():
    pacing, clock = _paced(most=4)
    _answers(pacing, clock, FAST, 1)
    for _ in range(3):  # calls started under the old limit, ending together
        with pacing._changed:
            pacing._in_flight += 1
        pacing.answered('set_power_state', SLOW)
    assert pacing.limit == 3


def test_answers_only_a_little_slower_do_not_lower_it():
    pacing, clock = _paced(most=4, slowdown=4.0)
    _answers(pacing, clock, FAST, 1)
    _answers(pacing, clock, FAST * 3.5, 20)
    assert pacing.limit == 4


def test_each_kind_of_call_is_compared_with_its_own_fastest_answer():
    pacing, clock = _paced(most=4)
    _answers(pacing, clock, FAST, 1, kind='get_ports')
    _answers(pacing, clock, SLOW, 1, kind='patch_node')
    _answers(pacing, clock, SLOW * 1.5, 3, kind='patch_node')
    assert pacing.limit == 4


def test_fast_answers_raise_the_limit_step_by_step_up_to_the_pool():
    pacing, clock = _paced(most=3)
    _answers(pacing, clock, FAST, 1)
    _answers(pacing, clock, SLOW, 10)
    assert pacing.limit == 1
    _answers(pacing, clock, FAST, pacing_mod.RAISE_AFTER * 1)
    assert pacing.limit == 2
    _answers(pacing, clock, FAST, pacing_mod.RAISE_AFTER * 2 - 1)
    assert pacing.limit == 2
    _answers(pacing, clock, FAST, 1 + 100)
    assert pacing.limit == 3


def test_an_ironic_slower_for_good_becomes_the_norm_within_two_windows():
    pacing, clock = _paced(most=2)
    _answers(pacing, clock, FAST, 1)
    slow_for = 2 * pacing_mod.WINDOW
    _answers(pacing, clock, SLOW, int(slow_for / SLOW))
    assert pacing.limit == 1
    _answers(pacing, clock, SLOW, pacing_mod.RAISE_AFTER)
    assert pacing.limit == 2


def test_the_fastest_answer_of_the_last_window_still_counts():
    pacing, clock = _paced(most=2)
    _answers(pacing, clock, FAST, 1)
    clock.now += pacing_mod.WINDOW * 1.5
    _answers(pacing, clock, SLOW, 1)
    assert pacing.limit == 1


def test_a_call_beyond_the_limit_waits_until_one_in_flight_answers():
    pacing = pacing_mod.Pacing(1, 4.0)
    entered, release = threading.Event(), threading.Event()

    def first():
        with pacing.call('get_node'):
            entered.set()
            release.wait(10)

    def second():
        with pacing.call('get_node'):
            pass

    threads = [threading.Thread(target=first), threading.Thread(
        target=second)]
    threads[0].start()
    assert entered.wait(10)
    threads[1].start()
    threads[1].join(0.3)
    assert threads[1].is_alive(), 'the second call did not wait'
    release.set()
    for thread in threads:
        thread.join(10)
    backends.wait_for(lambda: not threads[1].is_alive(), 10)
    assert pacing._in_flight == 0
