"""An adaptive limit on the Ironic writes one process has in flight.

Ironic answers a write (a power PUT, a node or port PATCH, a port
creation, a trait added) after a database write. (A boot-device PUT is
answered after the BMC, so it is left out; so are deletions, which find
nothing to do at once when the item is gone already.) Past the
concurrency Ironic can absorb, more writes in flight only wait in its
queue, and a one-process Ironic on SQLite spends more CPU on each (its
writers contend for the database lock), so fewer finish per second.
Measured on the benchmark's Ironic: 6 writers in flight made a power PUT
take 520-580 ms and a node cost Ironic 190-220 ms of CPU; 2 writers,
64-77 ms and 165-180 ms.

So, as TCP Vegas keeps a sender's window where round trips stay near
the fastest seen, :class:`WriteLimiter` keeps this process's writes in
flight where their latency stays near the lowest seen for each kind of
call: every :data:`WINDOW` writes, if the median ratio of latency to
that lowest exceeds :data:`SLOWER`, the limit drops to one less than the
most writes that were in flight at once meanwhile (not below one: a
ceiling above what the callers reach must not take windows to come
down); if it is under :data:`FAST` while writes waited for the limit,
it rises by one (not above the ceiling). The lowest latency of a kind
creeps up by :data:`DRIFT` per write, so one measured on an idle Ironic
does not hold the limit down for ever. Every process adapts on its own;
since all see the same Ironic, together they settle where it keeps up.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from inspector_ha.common import metrics
from inspector_ha.common import retry

T = TypeVar('T')
#: Writes observed between two adjustments of the limit.
WINDOW = 8
#: A median latency this many times the lowest: too many in flight.
SLOWER = 2.0
#: A median latency under this many times the lowest: room for more.
FAST = 1.5
#: How much the lowest latency of a kind rises with each write.
DRIFT = 1.002


class WriteLimiter:
    """At most :attr:`limit` writes in flight, adapted between 1 and
    ``ceiling``; a write waiting for a slot gives up with
    :class:`~inspector_ha.common.retry.Interrupted` once ``stop`` is set.
    """

    def __init__(self, ceiling: int, stop: threading.Event,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = ceiling
        self._ceiling = ceiling
        metrics.IRONIC_WRITE_LIMIT.set(ceiling)
        self._stop = stop
        self._clock = clock
        self._in_flight = 0
        self._slots = threading.Condition()
        self._lowest: dict[str, float] = {}
        self._ratios: list[float] = []
        self._waited = False
        self._most = 0

    def call(self, kind: str, func: Callable[[], T]) -> T:
        """``func()`` once a slot is free; its latency (if it returns) is
        observed as a write of ``kind``."""
        self._take()
        began = self._clock()
        latency = None
        try:
            value = func()
            latency = self._clock() - began
            return value
        finally:
            self._give_back(kind, latency)

    def _take(self) -> None:
        with self._slots:
            while self._in_flight >= self.limit:
                if self._stop.is_set():
                    raise retry.Interrupted('stopping')
                self._waited = True
                self._slots.wait(0.5)
            self._in_flight += 1
            self._most = max(self._most, self._in_flight)

    def _give_back(self, kind: str, latency: float | None) -> None:
        with self._slots:
            self._in_flight -= 1
            if latency is not None:
                self._observe(kind, latency)
            self._slots.notify_all()

    def _observe(self, kind: str, latency: float) -> None:
        lowest = min(latency, self._lowest.get(kind, latency) * DRIFT)
        self._lowest[kind] = lowest
        self._ratios.append(latency / lowest if lowest > 0 else 1.0)
        if len(self._ratios) >= WINDOW:
            self._adjust(statistics.median(self._ratios))
            self._ratios.clear()
            self._waited = False
            self._most = self._in_flight

    def _adjust(self, ratio: float) -> None:
        if ratio > SLOWER and self.limit > 1:
            self.limit = max(1, min(self.limit, self._most) - 1)
        elif ratio < FAST and self._waited and self.limit < self._ceiling:
            self.limit += 1
        else:
            return
        metrics.IRONIC_WRITE_LIMIT.set(self.limit)
