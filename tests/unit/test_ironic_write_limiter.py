"""The adaptive limit on a process's Ironic writes in flight."""

import threading
import time

import pytest

from inspector_ha.common import retry
from inspector_ha.ironic import limiter as limiter_mod


class _Clock:
    """Time that moves only when a fake call says how long it took."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _limiter(ceiling=4, stop=None):
    clock = _Clock()
    return limiter_mod.WriteLimiter(ceiling, stop or threading.Event(),
                                    clock), clock


def _write(limiter, clock, seconds, kind='set_node_power_state'):
    def call():
        clock.now += seconds
        return 'done'
    return limiter.call(kind, call)


def _window(limiter, clock, seconds):
    for _ in range(limiter_mod.WINDOW):
        assert _write(limiter, clock, seconds) == 'done'


def test_writes_slower_than_twice_the_fastest_lower_the_limit_to_one():
    limiter, clock = _limiter(ceiling=4)
    _window(limiter, clock, 0.05)
    assert limiter.limit == 4
    for expected in (3, 2, 1, 1):
        limiter._most = limiter.limit
        _window(limiter, clock, 0.5)
        assert limiter.limit == expected


def test_a_ceiling_above_the_writes_in_flight_comes_down_in_one_window():
    limiter, clock = _limiter(ceiling=16)
    _window(limiter, clock, 0.05)
    # NOTE: one write at a time (the helper's), well under the ceiling.
    _window(limiter, clock, 0.5)
    assert limiter.limit == 1


def test_fast_writes_that_waited_raise_the_limit_up_to_the_ceiling():
    limiter, clock = _limiter(ceiling=3)
    _window(limiter, clock, 0.05)
    _window(limiter, clock, 0.5)
    assert limiter.limit == 1
    _window(limiter, clock, 0.05)
    assert limiter.limit == 1  # nobody waited: no need for more
    for expected in (2, 3, 3):
        limiter._waited = True
        _window(limiter, clock, 0.05)
        assert limiter.limit == expected


def test_a_fastest_latency_seen_on_an_idle_ironic_does_not_hold_for_ever():
    limiter, clock = _limiter(ceiling=2)
    _write(limiter, clock, 0.01)
    for _ in range(2000):
        _write(limiter, clock, 0.1)
    # NOTE: 0.01 s grown by DRIFT 2000 times is past 0.1 s: the ratio is
    # back to 1, and waiting writes may raise the limit again.
    limiter._waited = True
    _window(limiter, clock, 0.1)
    assert limiter.limit == 2


def test_a_failed_write_is_not_observed_and_frees_its_slot():
    limiter, clock = _limiter(ceiling=1)

    def fails():
        clock.now += 9
        raise RuntimeError('refused')
    for _ in range(limiter_mod.WINDOW * 2):
        with pytest.raises(RuntimeError):
            limiter.call('patch_node', fails)
    assert limiter._ratios == [] and limiter.limit == 1
    assert _write(limiter, clock, 0.05) == 'done'


def test_no_more_writes_than_the_limit_are_in_flight_at_once():
    limiter = limiter_mod.WriteLimiter(2, threading.Event())
    in_flight, most = [0], [0]
    lock = threading.Lock()

    def call():
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.02)
        with lock:
            in_flight[0] -= 1
    threads = [threading.Thread(target=limiter.call, args=('x', call))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert most[0] == 2


def test_a_write_waiting_for_a_slot_gives_up_when_the_process_stops():
    stop = threading.Event()
    limiter = limiter_mod.WriteLimiter(1, stop)
    release = threading.Event()
    holder = threading.Thread(target=limiter.call,
                              args=('x', lambda: release.wait(10)))
    holder.start()
    deadline = time.monotonic() + 5
    while limiter._in_flight < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    began = time.monotonic()
    with pytest.raises(retry.Interrupted):
        limiter.call('x', lambda: None)
    assert time.monotonic() - began < 2
    release.set()
    holder.join(5)
