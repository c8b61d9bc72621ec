"""tooz coordinator: node locks, group membership and leader locks.

A node lock only saves work: two workers holding it at once (a lock that
expired under a paused holder) are stopped by the conditional UPDATEs of
the store, not by the lock.
"""

import logging
import threading
from urllib import parse

from tooz import coordination

from inspector_ha.common import retry

LOG = logging.getLogger(__name__)
PREFIX = 'inspector_ha.'
RETRYABLE = (coordination.ToozConnectionError,
             coordination.OperationTimedOut)


class Coordinator:
    def __init__(self, url, member_id, policy, lease_timeout=None):
        if lease_timeout is not None:
            url = with_timeout(url, lease_timeout)
        self.url = url
        self.member_id = member_id
        self._policy = policy
        self._coord = coordination.get_coordinator(
            url, member_id.encode('utf-8'))

    def start(self):
        self._policy.call(self._coord.start, start_heart=True)

    @property
    def raw(self):
        """The tooz coordinator, for membership and its watchers."""
        return self._coord

    def call(self, func, *args, **kwargs):
        """Call ``func`` under the coordination retry policy."""
        return self._policy.call(func, *args, **kwargs)

    def stop(self, timeout=10.0):
        """Stop, but never hang on a backend that is gone."""
        thread = threading.Thread(target=self._stop, daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            LOG.warning('Coordinator did not stop within %s s', timeout)

    def _stop(self):
        try:
            self._coord.stop()
        except coordination.ToozError as exc:
            LOG.warning('Coordinator did not stop cleanly: %s', exc)

    def lock(self, name):
        return _Lock(self._coord.get_lock((PREFIX + name).encode('utf-8')),
                     self._policy)

    def node_lock(self, uuid):
        return self.lock('node.' + uuid)


class _Lock:
    def __init__(self, lock, policy):
        self._lock = lock
        self._policy = policy

    def try_acquire(self):
        return self._policy.call(self._lock.acquire, blocking=False)

    def acquire(self, timeout):
        return self._policy.call(self._lock.acquire, blocking=timeout)

    def release(self):
        try:
            return self._lock.release()
        except coordination.ToozError as exc:
            LOG.warning('Lock release failed (it will expire): %s', exc)
            return False


def with_timeout(url, timeout):
    """``url`` with tooz's ``timeout`` option, unless it has one."""
    parts = parse.urlsplit(url)
    query = parse.parse_qsl(parts.query)
    if parts.scheme == 'file' or any(k == 'timeout' for k, _ in query):
        return url
    query.append(('timeout', '%d' % timeout))
    return parse.urlunsplit(parts._replace(query=parse.urlencode(query)))


def retry_policy(conf_group, stop):
    return retry.RetryPolicy('coordination', conf_group.retry_count,
                             conf_group.retry_timeout, stop, RETRYABLE,
                             location=retry.without_credentials(
                                 conf_group.backend_url))
