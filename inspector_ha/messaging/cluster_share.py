"""A worker process's share of the cluster's concurrency budget.

``[worker] cluster_concurrency`` bounds the requests handled at once
across the whole cluster, so that the workers together do not push
Ironic past what it serves well: on a saturated Ironic every call waits
longer and costs Ironic more CPU, so more requests in flight lower the
throughput (doc/guarantees.md I1). Each worker process takes its share,
the budget divided by the live workers (the members of
:data:`inspector_ha.coordination.membership.WORKERS`), rounded up, at
least 1 and at most its ``pool_size``; the membership watch resizes it
when workers come or go. With no budget (0) every process runs its whole
pool.

On RabbitMQ at most that many requests are handled at once
(:meth:`ClusterShare.take`); on this process's own queue (``fake://``) the
pool's threads numbered below the share take requests, the others wait
until the share grows to them.

:func:`share_of` also shares ``[worker] least_ironic_calls``, the least
limit of the workers' Ironic calls at once (:mod:`inspector_ha.ironic.pacing`).
"""

from __future__ import annotations

import math
import threading

from inspector_ha.common import metrics


def share_of(budget: int, workers: int, pool_size: int) -> int:
    """The slots of one of ``workers`` live worker processes."""
    if budget <= 0:
        return pool_size
    return max(1, min(pool_size, math.ceil(budget / max(1, workers))))


class ClusterShare:
    """Which threads of the pool may take requests: those numbered below
    this process's share, which changes with the number of live workers
    (:meth:`resize_for`). Until the first resize a process with a budget
    admits one thread: it does not know yet how many share the budget."""

    def __init__(self, budget: int, pool_size: int) -> None:
        self._budget = budget
        self._pool_size = pool_size
        self._slots = 1 if budget > 0 else pool_size
        self._busy = 0
        self._changed = threading.Condition()
        metrics.WORKER_SLOTS.set(self._slots)

    @property
    def slots(self) -> int:
        return self._slots

    def resize_for(self, workers: int) -> None:
        """Take this process's share among ``workers`` live workers."""
        slots = share_of(self._budget, workers, self._pool_size)
        with self._changed:
            if slots == self._slots:
                return
            self._slots = slots
            self._changed.notify_all()
        metrics.WORKER_SLOTS.set(slots)

    def admits(self, index: int, timeout: float = 0.0) -> bool:
        """Whether thread ``index`` (from 0) may take requests, waiting
        up to ``timeout`` seconds for the share to grow to it."""
        with self._changed:
            return self._changed.wait_for(lambda: index < self._slots,
                                          timeout)

    def take(self, timeout: float) -> bool:
        """Take a slot for one request, waiting up to ``timeout`` seconds
        for one to be free; False if none was."""
        with self._changed:
            if not self._changed.wait_for(
                    lambda: self._busy < self._slots, timeout):
                return False
            self._busy += 1
            return True

    def give_back(self) -> None:
        """The request of a slot from :meth:`take` is done."""
        with self._changed:
            self._busy -= 1
            self._changed.notify_all()
