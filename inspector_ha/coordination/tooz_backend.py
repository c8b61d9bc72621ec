"""tooz coordinator: node locks, leader locks and the member group.

The rest of the package uses tooz only through :class:`Coordinator`.

A node lock only saves work: two workers holding it at once (a lock that
expired under a paused holder) are stopped by the conditional UPDATEs of
the store, not by the lock.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib import parse

from tooz import coordination

from inspector_ha.common import retry

LOG = logging.getLogger(__name__)
T = TypeVar('T')
PREFIX = 'inspector_ha.'
RETRYABLE = (coordination.ToozConnectionError,
             coordination.OperationTimedOut)


class Coordinator:
    """This process's tooz coordinator; ``policy`` retries its calls."""

    def __init__(self, url: str, member_id: str,
                 policy: retry.RetryPolicy,
                 lease_timeout: float | None = None) -> None:
        if lease_timeout is not None:
            url = with_timeout(url, lease_timeout)
        self.url = url
        self.member_id = member_id
        self._policy = policy
        # NOTE: Any, as tooz's annotations want capabilities as a dict
        # while its drivers store (and members of 0.1.0 send) the JSON
        # bytes given here.
        self._coord: Any = coordination.get_coordinator(
            url, member_id.encode('utf-8'))

    def start(self) -> None:
        self._policy.call(self._coord.start, start_heart=True)

    def call(self, func: Callable[..., T], *args: Any,
             **kwargs: Any) -> T:
        """Call ``func`` under the coordination retry policy."""
        return self._policy.call(func, *args, **kwargs)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop, but never hang on a backend that is gone."""
        thread = threading.Thread(target=self._stop, daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            LOG.warning('Coordinator did not stop within %s s', timeout)

    def _stop(self) -> None:
        try:
            self._coord.stop()
        except Exception as exc:
            LOG.warning('Coordinator did not stop cleanly: %r', exc)

    def lock(self, name: str) -> _Lock:
        return _Lock(self._coord.get_lock((PREFIX + name).encode('utf-8')),
                     self._policy)

    def node_lock(self, uuid: str) -> _Lock:
        return self.lock('node.' + uuid)

    # The group API of tooz, as membership and the status command use it;
    # none of these retries (callers wrap them in :meth:`call`), and each
    # raises only tooz's errors (:func:`_tooz_errors_only`).

    def join_group(self, group: bytes, capabilities: bytes) -> None:
        """Join ``group`` (creating it if needed); already a member is
        fine."""
        with _tooz_errors_only():
            try:
                self._coord.join_group(group, capabilities).get()
            except coordination.GroupNotCreated:
                try:
                    self._coord.create_group(group).get()
                except coordination.GroupAlreadyExist:
                    pass
                self._coord.join_group(group, capabilities).get()
            except coordination.MemberAlreadyExist:
                pass

    def leave_group(self, group: bytes, timeout: float) -> None:
        with _tooz_errors_only():
            self._coord.leave_group(group).get(timeout=timeout)

    def update_capabilities(self, group: bytes,
                            capabilities: bytes) -> None:
        """Raises ``tooz.NotImplemented`` where the backend has none."""
        with _tooz_errors_only():
            self._coord.update_capabilities(group, capabilities).get()

    def member_ids(self, group: bytes, timeout: float | None = None,
                   absent_ok: bool = False) -> set[bytes]:
        """The members of ``group`` (bytes ids), waiting at most
        ``timeout`` seconds for the answer; with ``absent_ok`` none when
        nobody created the group yet (no worker has started, say)."""
        with _tooz_errors_only():
            try:
                return self._coord.get_members(group).get(timeout=timeout)
            except coordination.GroupNotCreated:
                if absent_ok:
                    return set()
                raise

    def members(self, group: bytes) -> dict[str, Any]:
        """``{member_id: capabilities}`` of ``group`` (JSON-decoded)."""
        return {member.decode(): self.capabilities(group, member)
                for member in self.member_ids(group)}

    def capabilities(self, group: bytes, member: bytes) -> Any:
        """What ``member`` of ``group`` shows (JSON-decoded)."""
        with _tooz_errors_only():
            caps = self._coord.get_member_capabilities(group, member).get()
        return json.loads(caps or b'{}')

    def ping(self, timeout: float) -> None:
        """One bounded round trip to the backend."""
        with _tooz_errors_only():
            self._coord.get_groups().get(timeout=timeout)


class _Lock:
    """A tooz lock whose acquiring is retried by ``policy``."""

    def __init__(self, lock: Any, policy: retry.RetryPolicy) -> None:
        self._lock = lock
        self._policy = policy

    def try_acquire(self) -> bool:
        """Take the lock if it is free. (No blocking acquire is offered:
        with a timeout, the ZooKeeper and etcd drivers raise their
        client's own errors where the lock stays taken.)"""
        return self._policy.call(self._lock.acquire, blocking=False)

    def release(self) -> bool:
        try:
            return self._lock.release()
        except coordination.ToozError as exc:
            LOG.warning('Lock release failed (it will expire): %s', exc)
            return False


@contextlib.contextmanager
def _tooz_errors_only() -> Iterator[None]:
    """Hand on tooz's errors; any other is the backend's client failing.

    tooz 9's redis driver returns its group calls' results without
    translating the client's errors, so a Redis gone between two calls
    surfaced as ``redis.exceptions.ConnectionError``, which no retry
    policy counted and which stopped a worker without naming the
    backend. Every such error becomes a :class:`ToozConnectionError`,
    which the ``coordination`` policy retries and then reports as
    ``coordination unavailable``.
    """
    try:
        yield
    except coordination.ToozError:
        raise
    except Exception as exc:
        raise coordination.ToozConnectionError(
            'coordination backend failed: %r' % exc) from exc


def with_timeout(url: str, timeout: float) -> str:
    """``url`` with tooz's ``timeout`` option, unless it has one."""
    parts = parse.urlsplit(url)
    query = parse.parse_qsl(parts.query)
    if parts.scheme == 'file' or any(k == 'timeout' for k, _ in query):
        return url
    query.append(('timeout', '%d' % timeout))
    return parse.urlunsplit(parts._replace(query=parse.urlencode(query)))


def retry_policy(conf_group: Any,
                 stop: threading.Event) -> retry.RetryPolicy:
    return retry.RetryPolicy('coordination', conf_group.retry_count,
                             conf_group.retry_timeout, stop, RETRYABLE,
                             location=retry.without_credentials(
                                 conf_group.backend_url))
