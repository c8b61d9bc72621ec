"""The process's stop flag and its first fatal failure.

Every thread of a process gets this one object (not the service): it
waits on :attr:`Lifecycle.stop` instead of sleeping, and calls
:meth:`Lifecycle.fail` when a backend is gone for good, which stops the
whole process (``sigterm_flag`` and the partition rule of
doc/design.md).
"""

from __future__ import annotations

import logging
import threading

from inspector_ha.common import retry

LOG = logging.getLogger(__name__)


class Lifecycle:
    def __init__(self) -> None:
        self.stop = threading.Event()
        self.failure: BaseException | None = None
        #: Set once the service has shut down (every component stopped
        #: or given up on): the watch's hard exit is then not needed.
        self.done = threading.Event()

    def fail(self, exc: BaseException) -> None:
        """A backend is gone for good: stop the whole process.

        ``Interrupted`` only follows a stop already under way (SIGTERM, or
        another failure): it is no failure of its own.
        """
        if self.failure is None and not isinstance(exc, retry.Interrupted):
            LOG.error('Stopping the service: %s', exc)
            self.failure = exc
        self.stop.set()
