"""Retrying backend calls with an interruptible pause.

Every backend (Ironic, database, coordination, queue) has a retry count
and a retry timeout. The pause is a wait on the process stop event, so a
SIGTERM interrupts it at once (the design's ``sigterm_flag.wait``).
"""

import logging

LOG = logging.getLogger(__name__)


class BackendUnavailable(Exception):
    """A backend stayed unreachable for the whole retry budget."""

    def __init__(self, backend, cause):
        super().__init__('%s unavailable: %s' % (backend, cause))
        self.backend = backend
        self.cause = cause


class Interrupted(Exception):
    """A pause was interrupted because the process is stopping."""


class RetryPolicy:
    """How often and how patiently to retry calls to one backend.

    :param backend: name used in logs and errors.
    :param count: retries after the first attempt.
    :param timeout: pause between attempts, in seconds.
    :param stop: a ``threading.Event`` set when the process stops.
    :param retry_on: exception classes worth retrying.
    """

    def __init__(self, backend, count, timeout, stop, retry_on,
                 retry_if=None):
        self.backend = backend
        self.retry_if = retry_if or (lambda exc: True)
        self.count = count
        self.timeout = timeout
        self.stop = stop
        self.retry_on = tuple(retry_on)

    def call(self, func, *args, **kwargs):
        for attempt in range(self.count + 1):
            try:
                return func(*args, **kwargs)
            except self.retry_on as exc:
                if not self.retry_if(exc):
                    raise
                last = exc
                if not self._pause(attempt, exc):
                    break
        raise BackendUnavailable(self.backend, last)

    def _pause(self, attempt, exc):
        if attempt >= self.count:
            return False
        LOG.warning('%s call failed (attempt %d of %d): %s', self.backend,
                    attempt + 1, self.count + 1, exc)
        if self.stop.wait(self.timeout):
            raise Interrupted(self.backend)
        return True
