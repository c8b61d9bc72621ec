"""How many Ironic calls a worker process makes at once: a limit that
backs off while Ironic answers slowly.

A saturated Ironic queues calls: each waits longer and, on one Ironic
process, costs it more CPU, so more calls in flight make fewer nodes a
second (``benchmarks/results/2026-11-26-cluster-concurrency.md``; on
2026-11-26 the benchmark's split cluster, 12 calls in flight, had
Ironic answer its power calls in 390 ms and cost it 134 ms of CPU per
node, against 68 ms and 95 ms with three). No setting can know the
Ironic a site runs, so each worker process watches how long Ironic
takes to answer and keeps its calls in flight where the answers stay
fast, as TCP keeps its window where the round trips stay short:

- each kind of call keeps its fastest answer over the last
  :data:`WINDOW` to twice that many seconds (its floor), so an Ironic
  that stays slower becomes the norm within two windows, while a low
  limit, where Ironic answers fastest, keeps showing the true floor;
- a successful answer slower than ``slowdown`` times its floor lowers
  the limit by a quarter (at least one), at most once per such answer's
  duration (the calls started under the old limit do not count twice);
  a failed call frees its room and says nothing of Ironic's speed;
- :data:`RAISE_AFTER` times ``limit`` fast answers of calls that found
  the limit reached, with no slow answer in between, raise it by one,
  up to the pool size: a limit nothing pressed against is not raised.

Waiting calls are not served in order: one arriving as room frees may
take it first.

The limit never falls below its least value: one, or this process's
share of ``[worker] least_ironic_calls`` among the live worker processes
(shared as :func:`~inspector_ha.messaging.cluster_share.share_of` shares
``cluster_concurrency``; :meth:`Pacing.resize_for`), so that the workers
together keep at least that many calls in flight while they have work.
One call in flight leaves Ironic idle from each answer to the next call;
a lone worker process at one call kept the benchmark's one-process
Ironic busy only 81-85% of a batch
(``benchmarks/results/2026-11-27-embedded-pacing.md``).
A call waits at most :data:`LONGEST_WAIT` for room, so work always
proceeds even behind a call Ironic never answers.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator

from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.messaging import cluster_share

LOG = logging.getLogger(__name__)
#: How a change of the limit is logged (DEBUG): ``<this>: <limit> (why)``.
CHANGED = 'Ironic calls at once'
#: Seconds of one window of a kind's fastest answer.
WINDOW = 30.0
#: Fast answers in a row, per unit of the limit, that raise it by one.
RAISE_AFTER = 4
#: Longest wait of a call for room, in seconds; then it goes ahead.
LONGEST_WAIT = 30.0
#: How often a waiting call looks at the stop flag, in seconds.
_SLICE = 0.5


class Pacing:
    """Admits about ``limit`` calls at once, ``least <= limit <= most``.

    :param most: the limit's ceiling (the worker pool's size).
    :param slowdown: an answer this many times slower than its kind's
        floor counts as Ironic saturated.
    :param stop: set when the process stops: a waiting call raises
        :class:`~inspector_ha.common.retry.Interrupted`.
    :param clock: monotonic seconds.
    :param cluster_least: the least limit of the cluster's worker
        processes together; this process's share of it is its least
        limit once :meth:`resize_for` is told how many workers are live
        (until then, one).
    """

    def __init__(self, most: int, slowdown: float,
                 stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 cluster_least: int = 1) -> None:
        self._most = most
        self._slowdown = slowdown
        self._stop = stop
        self._clock = clock
        self._cluster_least = cluster_least
        self._least = 1
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

    @property
    def least(self) -> int:
        """The least value of the limit."""
        return self._least

    @property
    def cluster_least(self) -> int:
        """The least limit of the cluster's workers together."""
        return self._cluster_least

    def resize_for(self, workers: int) -> None:
        """Take this process's share of ``cluster_least`` among
        ``workers`` live worker processes as the limit's least value,
        raising the limit to it."""
        least = cluster_share.share_of(self._cluster_least, workers,
                                       self._most)
        with self._changed:
            if least == self._least:
                return
            self._least = least
            raised = self._limit < least
            if raised:
                self._limit = least
                self._changed.notify_all()
                metrics.IRONIC_CALLS_AT_ONCE.set(least)
        if raised:
            LOG.debug('%s: %d (least_ironic_calls shared; live workers: '
                      '%d)', CHANGED, least, workers)

    @contextlib.contextmanager
    def call(self, kind: str | None) -> Iterator[None]:
        """Wait for room, then time the call made inside as ``kind``
        (None: a call whose time says nothing of Ironic's load)."""
        pressed = self._enter()
        started, answered = self._clock(), False
        try:
            yield
            answered = True
        finally:
            self._leave(kind if answered else None, started, pressed)

    def _enter(self) -> bool:
        """Take room; whether the limit was reached (this call waited or
        filled it)."""
        deadline = self._clock() + LONGEST_WAIT
        with self._changed:
            waited = False
            while self._in_flight >= self._limit:
                if self._stop is not None and self._stop.is_set():
                    raise retry.Interrupted('waiting to call Ironic')
                if self._clock() >= deadline:
                    break
                waited = True
                self._changed.wait(_SLICE)
            self._in_flight += 1
            return waited or self._in_flight >= self._limit

    def _leave(self, kind: str | None, started: float,
               pressed: bool) -> None:
        now = self._clock()
        seconds = now - started
        why = None
        with self._changed:
            self._in_flight -= 1
            if kind is not None:
                floor = self._floor(kind, seconds, now)
                if seconds > self._slowdown * floor:
                    why = self._lower(kind, seconds, floor, now)
                elif pressed:
                    why = self._fast()
            self._changed.notify_all()
            limit = self._limit
            metrics.IRONIC_CALLS_AT_ONCE.set(limit)
        if why is not None:
            LOG.debug('%s: %d (%s)', CHANGED, limit, why)

    def _floor(self, kind: str, seconds: float, now: float) -> float:
        """Add an answer of ``kind``; its floor, that answer counted."""
        floor = self._floors.get(kind)
        if floor is None:
            floor = self._floors[kind] = _WindowedMin(now)
        return floor.add(seconds, now)

    def _lower(self, kind: str, seconds: float, floor: float,
               now: float) -> str | None:
        """Lower the limit if it may be; why it was lowered, or None."""
        self._fast_in_a_row = 0
        if now < self._calm_until or self._limit <= self._least:
            return None
        self._calm_until = now + seconds
        self._limit = max(self._least,
                          self._limit - max(1, self._limit // 4))
        return '%s answered in %.0f ms, over %.1f times its fastest, ' \
            '%.0f ms' % (kind, seconds * 1000, self._slowdown, floor * 1000)

    def _fast(self) -> str | None:
        """Count a fast answer; why the limit was raised, or None."""
        self._fast_in_a_row += 1
        if self._fast_in_a_row < RAISE_AFTER * self._limit:
            return None
        self._fast_in_a_row = 0
        if self._limit == self._most:
            return None
        self._limit += 1
        return '%d fast answers in a row' % (RAISE_AFTER * (self._limit - 1))


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
            self._started += WINDOW * ((now - self._started) // WINDOW)
        self._current = min(self._current, value)
        return min(self._current, self._previous)
