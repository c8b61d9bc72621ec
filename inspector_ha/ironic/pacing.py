"""How many Ironic calls a worker process makes at once: a limit that
backs off while Ironic answers slowly.

A saturated Ironic queues calls: each waits longer and, on one Ironic
process, costs it more CPU, so more calls in flight make fewer nodes a
second (``benchmarks/results/2026-11-26-cluster-concurrency.md``: six in
flight cost Ironic 16-40% more CPU per node than two or three, and its
writes answered four to six times slower). No setting can know the
Ironic a site runs, so each worker process watches how long Ironic takes
to answer and keeps its calls in flight where the answers stay fast, as
TCP keeps its window where the round trips stay short:

- each kind of call keeps its fastest answer over the last
  :data:`WINDOW` to twice that many seconds (its ``floor``), so an Ironic
  that stays slower becomes the norm within two windows, while a limit
  of one, where Ironic answers fastest, keeps showing the true floor;
- an answer slower than ``slowdown`` times its floor lowers the limit by
  one, at most once per such answer's duration (the calls started under
  the old limit do not count twice);
- :data:`RAISE_AFTER` times ``limit`` answers in a row within it raise
  the limit by one, up to the pool size.

The limit never falls below one, so work always proceeds.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from inspector_ha.common import metrics

#: Seconds of one window of a kind's fastest answer.
WINDOW = 30.0
#: Answers in a row within ``slowdown``, per unit of the limit, that
#: raise it by one.
RAISE_AFTER = 4


class Pacing:
    """Admits at most ``limit`` calls at once, ``1 <= limit <= most``.

    :param most: the limit's ceiling (the worker pool's size).
    :param slowdown: an answer this many times slower than its kind's
        floor counts as Ironic saturated.
    :param clock: monotonic seconds.
    """

    def __init__(self, most: int, slowdown: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._most = most
        self._slowdown = slowdown
        self._clock = clock
        self._limit = most
        self._in_flight = 0
        self._fast_in_a_row = 0
        self._calm_until = 0.0
        self._floors: dict[str, _WindowedMin] = {}
        self._changed = threading.Condition()
        metrics.IRONIC_CALLS_AT_ONCE.set(most)

    @property
    def limit(self) -> int:
        return self._limit

    @contextlib.contextmanager
    def call(self, kind: str) -> Iterator[None]:
        """Wait for room, then time the call made inside as ``kind``."""
        with self._changed:
            self._changed.wait_for(lambda: self._in_flight < self._limit)
            self._in_flight += 1
        started = self._clock()
        try:
            yield
        finally:
            self.answered(kind, self._clock() - started)

    def answered(self, kind: str, seconds: float) -> None:
        """A call of ``kind`` took ``seconds``: free its room and adjust
        the limit."""
        with self._changed:
            self._in_flight -= 1
            if self._slow(kind, seconds):
                self._lower(seconds)
            else:
                self._fast()
            self._changed.notify_all()
        metrics.IRONIC_CALLS_AT_ONCE.set(self._limit)

    def _slow(self, kind: str, seconds: float) -> bool:
        floor = self._floors.setdefault(kind, _WindowedMin(self._clock()))
        return seconds > self._slowdown * floor.add(seconds, self._clock())

    def _lower(self, seconds: float) -> None:
        self._fast_in_a_row = 0
        now = self._clock()
        if now < self._calm_until:
            return
        self._calm_until = now + seconds
        self._limit = max(1, self._limit - 1)

    def _fast(self) -> None:
        self._fast_in_a_row += 1
        if self._fast_in_a_row >= RAISE_AFTER * self._limit:
            self._fast_in_a_row = 0
            self._limit = min(self._most, self._limit + 1)


class _WindowedMin:
    """The least value added over the current :data:`WINDOW` and the
    one before it."""

    def __init__(self, now: float) -> None:
        self._started = now
        self._current = self._previous = float('inf')

    def add(self, value: float, now: float) -> float:
        """Add ``value``; return the least value of the two windows."""
        if now - self._started >= WINDOW:
            recent = now - self._started < 2 * WINDOW
            self._previous = self._current if recent else float('inf')
            self._current = float('inf')
            self._started = now
        self._current = min(self._current, value)
        return min(self._current, self._previous)
