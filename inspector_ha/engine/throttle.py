"""The cluster-wide reboot throttle: one lock, one power-on per quantum."""

from inspector_ha.common import retry


class RebootThrottle:
    """Holds lock ``reboot`` while sleeping ``quantum`` then powering on.

    The sleep is a wait on the stop event: a SIGTERM interrupts it, the
    reboot is not made and :class:`Interrupted` stops the worker.
    A quantum of 0 disables the throttle.
    """

    def __init__(self, coordinator, quantum, stop):
        self._coordinator = coordinator
        self._quantum = quantum
        self._stop = stop

    def run(self, func, *args):
        if self._quantum <= 0:
            return func(*args)
        lock = self._coordinator.lock('reboot')
        while not lock.acquire(timeout=1.0):
            if self._stop.is_set():
                raise retry.Interrupted('reboot throttle')
        try:
            if self._stop.wait(self._quantum):
                raise retry.Interrupted('reboot throttle')
            return func(*args)
        finally:
            lock.release()
