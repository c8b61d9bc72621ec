"""Retrying backend calls with an interruptible pause.

Every backend (Ironic, database, coordination, queue) has a retry count
and a retry timeout. The pause is a wait on the process stop event, so a
SIGTERM interrupts it at once (``sigterm_flag.wait`` in doc/design.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import threading

LOG = logging.getLogger(__name__)

_T = TypeVar('_T')


class BackendUnavailable(Exception):
    """A backend stayed unreachable for the whole retry budget."""

    def __init__(self, backend: str, cause: BaseException,
                 location: str | None = None) -> None:
        where = ' at %s' % location if location else ''
        super().__init__(without_credentials(
            '%s unavailable%s: %s' % (backend, where, cause)))
        self.backend = backend
        self.cause = cause


#: The ``user:password@`` of a URL, also after each comma of a
#: multi-host URL (``rabbit://u:p@a,u:p@b/``).
_USERINFO = re.compile(r'(://|(?<=://)[^/\s]*,)[^/@\s,]+@')


def without_credentials(text: str) -> str:
    """``text`` with the ``user:password@`` of any URL in it removed."""
    previous = None
    while previous != text:
        previous, text = text, _USERINFO.sub(r'\1', text)
    return text


class Interrupted(Exception):
    """A pause was interrupted because the process is stopping."""


#: A backend gone for the whole retry budget, or the process stopping:
#: not the failure of the work that met it, so it is passed on.
UNAVAILABLE_OR_STOPPING = (BackendUnavailable, Interrupted)


class RetryPolicy:
    """How often and how patiently to retry calls to one backend.

    :param backend: name used in logs and errors.
    :param count: retries after the first attempt.
    :param timeout: pause between attempts, in seconds.
    :param stop: a ``threading.Event`` set when the process stops.
    :param retry_on: exception classes worth retrying.
    :param location: where the backend is (a URL without credentials),
        for errors.
    """

    def __init__(self, backend: str, count: int, timeout: float,
                 stop: threading.Event,
                 retry_on: Iterable[type[BaseException]],
                 retry_if: Callable[[BaseException], bool] | None = None,
                 location: str | None = None) -> None:
        self.backend = backend
        self.location = location
        self.retry_if = retry_if or (lambda exc: True)
        self.count = count
        self.timeout = timeout
        self.stop = stop
        self.retry_on = tuple(retry_on)

    def call(self, func: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        for attempt in range(self.count + 1):
            try:
                return func(*args, **kwargs)
            except self.retry_on as exc:
                if not self.retry_if(exc):
                    raise
                last = exc
            # NOTE: out of the except clause, so that oslo.log does not
            # append the exception a second time to the warning.
            if not self._pause(attempt, last):
                break
        raise BackendUnavailable(self.backend, last, self.location)

    def _pause(self, attempt: int, exc: BaseException) -> bool:
        if attempt >= self.count:
            return False
        LOG.warning('%s call failed (attempt %d of %d): %s', self.backend,
                    attempt + 1, self.count + 1,
                    without_credentials(str(exc)))
        if self.stop.wait(self.timeout):
            raise Interrupted(self.backend)
        return True
