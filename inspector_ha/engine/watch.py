"""The backend watch: an idle worker notices a database or broker that
is gone, so that its service stops like a busy one's (``cmd/worker.py``
then exits, or waits for the database)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from inspector_ha.common import lifecycle as lifecycle_mod
from inspector_ha.common import retry
from inspector_ha.db import api as db_api

LOG = logging.getLogger(__name__)


class Watch(threading.Thread):
    """Every ``[worker] watch_period``, one round trip to the database and
    one to the broker, each under its own retry policy: once either is
    gone for its whole retry budget, the process stops and exits non-zero
    even if it had nothing to do (the partition rule of doc/design.md).
    A backend that answered the process's own work within the period (a
    transaction committed, a message delivered) is not probed again: a
    busy worker's work proves it, and one that stops answering is probed
    from the next period on.

    Once the process has failed (whoever noticed), the watch also bounds
    its shutdown: a driver thread may be stuck in its own retries (tooz's
    Redis driver: about a minute per call, and futurist joins its threads
    at exit), so a service not shut down ``[worker] shutdown_timeout``
    after the failure ends the process with ``hard_exit(1)``. Nothing is
    lost: unacknowledged messages return to the queue and every SQL write
    is a whole transaction.
    """

    def __init__(self, *, store: db_api.Store,
                 broker: tuple[Any, Any] | None,
                 lifecycle: lifecycle_mod.Lifecycle, opts: Any,
                 hard_exit: Callable[[int], object] = os._exit,
                 delivered_at: Callable[[], float] = lambda: 0.0) -> None:
        """``broker`` is ``(probe, retry policy)`` or None (in-process
        messaging); ``opts`` the ``[worker]`` group; ``delivered_at()``
        when the broker last delivered a message (``time.monotonic()``)."""
        super().__init__(name='backend-watch', daemon=True)
        self._store = store
        self._broker: Any
        self._broker_policy: Any
        self._broker, self._broker_policy = broker or (None, None)
        self._life = lifecycle
        self._opts = opts
        self._hard_exit = hard_exit
        self._delivered_at = delivered_at

    def run(self) -> None:
        try:
            self._watch()
        finally:
            if self._broker is not None:
                self._broker.close()
        if self._life.failure is not None:
            self._exit_in_time(self._opts.shutdown_timeout)

    def _watch(self) -> None:
        try:
            while not self._life.stop.wait(self._opts.watch_period):
                self.probe()
        except retry.Interrupted:
            pass
        except retry.BackendUnavailable as exc:
            LOG.error('Stopping: %s', exc)
            self._life.fail(exc)

    def probe(self) -> None:
        """A round trip to each backend that has not answered within the
        last ``watch_period``."""
        answered_since = time.monotonic() - self._opts.watch_period
        if self._store.answered_at < answered_since:
            self._store.transaction(db_api.select_one)
        if self._broker is not None and (
                self._delivered_at() < answered_since):
            self._broker_policy.call(self._broker)

    def _exit_in_time(self, grace: float) -> None:
        if self._life.done.wait(grace):
            return
        LOG.error('Shutdown not over %.1f s after the failure; exiting',
                  grace)
        for handler in logging.getLogger().handlers:
            handler.flush()
        self._hard_exit(1)
