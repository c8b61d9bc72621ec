"""Which release's behaviour a member may use during a rolling upgrade.

Every release names what it puts on the wire (object versions) and which
events it queues. While a member of an older release is alive in the
tooz group (each member announces ``version`` in its capabilities, since
0.1.0), or while ``[DEFAULT] pin_release_version`` names an older
release, the others speak that release: the *effective release* is the
lowest of the live members' releases and the pin.

:class:`Releases` answers ``allows('0.2.0')`` from a cached look at the
group (refreshed every ``ttl`` seconds). A group it cannot read counts as
the oldest known release: using too little is always safe, too much is not.
"""

import logging
import threading
import time

from inspector_ha.coordination import membership

LOG = logging.getLogger(__name__)

#: What each release understands, oldest first. A new release adds its
#: entry here and never changes an older one.
RELEASES = {
    '0.1.0': {
        'objects': {'TransitionRequest': '1.0'},
        'events': ('start', 'wait', 'process', 'finish', 'error',
                   'timeout', 'abort', 'abort_end', 'reapply', 'delete'),
    },
    '0.2.0': {
        'objects': {'TransitionRequest': '1.1', 'WhitelistChange': '1.0',
                    'BlacklistChange': '1.0'},
        'events': ('start', 'wait', 'process', 'finish', 'error',
                   'timeout', 'abort', 'abort_end', 'reapply', 'delete'),
    },
}
OLDEST = '0.1.0'
CURRENT = '0.2.0'


def _key(version):
    """``'0.2.1.dev3'`` -> ``(0, 2, 1)``; None when not a version."""
    parts = []
    for piece in str(version).split('.')[:3]:
        digits = ''
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            return None
        parts.append(int(digits))
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


def release_of(version):
    """The newest known release not newer than ``version`` (a member's
    announced package version); the oldest release when unknown."""
    key = _key(version)
    if key is None:
        return OLDEST
    known = [r for r in RELEASES if _key(r) <= key]
    return max(known, key=_key) if known else OLDEST


def lowest(versions, pin=None):
    """The effective release of members announcing ``versions`` (package
    versions, None for a member announcing none) under ``pin``."""
    releases = [release_of(v) for v in versions]
    if pin:
        releases.append(release_of(pin))
    return min(releases, key=_key) if releases else CURRENT


def is_at_least(release, wanted):
    return _key(release) >= _key(wanted)


def member_versions(raw):
    """``{member_id: announced version or None}`` of the tooz group."""
    return {member: caps.get('version') if isinstance(caps, dict) else None
            for member, caps in membership.members(raw).items()}


class Releases:
    """The effective release of the cluster, as this member sees it.

    ``coordinator`` is the service's :class:`tooz_backend.Coordinator`
    (its ``raw`` tooz coordinator is read); ``pin`` is
    ``[DEFAULT] pin_release_version`` (None: automatic).
    """

    def __init__(self, coordinator, pin=None, ttl=5.0, clock=time.monotonic,
                 wait=1.0):
        self._coordinator = coordinator
        self._pin = pin or None
        self._ttl = ttl
        self._clock = clock
        self._wait = wait
        self._lock = threading.Lock()
        self._cached = None
        self._at = None
        self._looking = None

    def effective(self):
        """The release every live member (and the pin) understands.

        The group is read on a thread of its own, waited for ``wait``
        seconds at most: a coordination backend that does not answer
        never holds up a caller (an API answer) for longer; meanwhile the
        answer is the oldest release, which is always safe.
        """
        with self._lock:
            now = self._clock()
            stale = self._at is None or now - self._at >= self._ttl
            if stale and self._looking is None:
                self._looking = threading.Thread(
                    target=self._refresh, daemon=True, name='releases')
                self._looking.start()
            looking = self._looking
        if looking is not None:
            looking.join(self._wait)
        with self._lock:
            if self._looking is not None or self._cached is None:
                return OLDEST
            return self._cached

    def _refresh(self):
        result = self._look()
        with self._lock:
            self._cached = result
            self._at = self._clock()
            self._looking = None

    def _look(self):
        try:
            versions = member_versions(self._coordinator.raw).values()
        except Exception as exc:
            LOG.warning('Cannot read the member versions (%r); speaking '
                        'release %s', exc, OLDEST)
            return OLDEST
        return lowest(versions, self._pin)

    def allows(self, release):
        """May this member use behaviour introduced in ``release``?"""
        return is_at_least(self.effective(), release)

    def object_version(self, name):
        """The version to publish object ``name`` at."""
        return RELEASES[self.effective()]['objects'][name]

    def events(self):
        """The events every live member knows."""
        return RELEASES[self.effective()]['events']

    def forget(self):
        """Look at the group again on the next question."""
        with self._lock:
            self._at = None
