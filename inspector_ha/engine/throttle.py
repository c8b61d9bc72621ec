"""The cluster-wide reboot throttle: one lock, one power-on per quantum."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from inspector_ha.common import retry
from inspector_ha.coordination import tooz_backend

T = TypeVar('T')
#: Seconds between tries for the lock another worker holds.
LOCK_POLL = 0.1


class RebootThrottle:
    """Holds lock ``reboot`` while sleeping ``quantum`` then powering on.

    The sleep is a wait on the stop event: a SIGTERM interrupts it, the
    reboot is not made and :class:`Interrupted` stops the worker.
    A quantum of 0 disables the throttle.
    """

    def __init__(self, coordinator: tooz_backend.Coordinator, quantum: float,
                 stop: threading.Event) -> None:
        self._coordinator = coordinator
        self._quantum = quantum
        self._stop = stop

    def run(self, func: Callable[..., T], *args: Any) -> T:
        if self._quantum <= 0:
            return func(*args)
        lock = self._coordinator.lock('reboot')
        while not lock.try_acquire():
            if self._stop.wait(LOCK_POLL):
                raise retry.Interrupted('reboot throttle')
        try:
            if self._stop.wait(self._quantum):
                raise retry.Interrupted('reboot throttle')
            return func(*args)
        finally:
            lock.release()
