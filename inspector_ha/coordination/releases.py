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

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from inspector_ha.coordination import membership
from inspector_ha.coordination import tooz_backend

LOG = logging.getLogger(__name__)

#: What each release understands, oldest first. A new release adds its
#: entry here and never changes an older one.
RELEASES: dict[str, dict[str, Any]] = {
    '0.1.0': {
        'objects': {'TransitionRequest': '1.0'},
        'events': ('start', 'wait', 'process', 'finish', 'error',
                   'timeout', 'abort', 'abort_end', 'reapply', 'delete'),
    },
    '0.2.0': {
        'objects': {'TransitionRequest': '1.1', 'WhitelistChange': '1.0',
                    'BlacklistChange': '1.0', 'BlacklistSnapshot': '1.0'},
        'events': ('start', 'wait', 'process', 'finish', 'error',
                   'timeout', 'abort', 'abort_end', 'reapply', 'delete'),
    },
}
OLDEST = '0.1.0'
CURRENT = '0.2.0'
#: Looks of :class:`Releases` that may take the versions the look before
#: read, while the group's members are the same, between two that read
#: every member's: a member's version never changes while it lives, but
#: its id (``host.pid``) may come back with another release, as a
#: container restarted keeps its host name and PID.
REUSED_LOOKS = 9


def _key(version: object) -> tuple[int, ...] | None:
    """``'0.2.1.dev3'`` -> ``(0, 2, 1)``; None when not a version."""
    parts: list[int] = []
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


def _release_key(release: str) -> tuple[int, ...]:
    """The key of a release name (one of :data:`RELEASES`, a version)."""
    key = _key(release)
    if key is None:
        raise ValueError('not a release: %r' % (release,))
    return key


def release_of(version: object) -> str:
    """The newest known release not newer than ``version`` (a member's
    announced package version); the oldest release when unknown."""
    key = _key(version)
    if key is None:
        return OLDEST
    known = [r for r in RELEASES if _release_key(r) <= key]
    return max(known, key=_release_key) if known else OLDEST


def lowest(versions: Iterable[object], pin: str | None = None) -> str:
    """The effective release of members announcing ``versions`` (package
    versions, None for a member announcing none) under ``pin``."""
    releases = [release_of(v) for v in versions]
    if pin:
        releases.append(release_of(pin))
    return min(releases, key=_release_key) if releases else CURRENT


def is_at_least(release: str, wanted: str) -> bool:
    return _release_key(release) >= _release_key(wanted)


def member_versions(
        coordinator: tooz_backend.Coordinator) -> dict[str, Any]:
    """``{member_id: announced version or None}`` of the member group."""
    return {member: _version_in(caps)
            for member, caps in membership.members(coordinator).items()}


def _version_in(capabilities: Any) -> Any:
    """The version a member announces in its capabilities, or None."""
    if isinstance(capabilities, dict):
        return capabilities.get('version')
    return None


class Releases:
    """The effective release of the cluster, as this member sees it.

    ``coordinator`` is the service's :class:`tooz_backend.Coordinator`
    (the member group is read); ``pin`` is
    ``[DEFAULT] pin_release_version`` (None: automatic).

    A look lists the group; it reads each member's capabilities only
    when the members changed since the look before, and at least every
    ``REUSED_LOOKS + 1`` looks (a tooz call per member: in a batch, most
    of what the coordination client's thread did in every process).
    """

    def __init__(self, coordinator: tooz_backend.Coordinator,
                 pin: str | None = None, ttl: float = 5.0,
                 clock: Callable[[], float] = time.monotonic,
                 wait: float = 1.0) -> None:
        self._coordinator = coordinator
        self._pin = pin or None
        self._ttl = ttl
        self._clock = clock
        self._wait = wait
        self._lock = threading.Lock()
        self._cached: str | None = None
        self._at: float | None = None
        self._looking: threading.Thread | None = None
        #: The versions the last look read, by member id, and how many
        #: looks since have taken them again.
        self._versions: dict[bytes, Any] = {}
        self._reused = 0

    def effective(self) -> str:
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

    def _refresh(self) -> None:
        result = self._look()
        with self._lock:
            self._cached = result
            self._at = self._clock()
            self._looking = None

    def _look(self) -> str:
        try:
            versions = self._member_versions()
        except Exception as exc:
            self._versions = {}
            LOG.warning('Cannot read the member versions (%r); speaking '
                        'release %s', exc, OLDEST)
            return OLDEST
        return lowest(versions, self._pin)

    def _member_versions(self) -> Iterable[Any]:
        """The live members' versions: the last look's while the members
        are the same (at most ``REUSED_LOOKS`` times), else read."""
        members = self._coordinator.member_ids(membership.GROUP)
        if members == self._versions.keys() and (
                self._reused < REUSED_LOOKS):
            self._reused += 1
            return self._versions.values()
        self._versions = {
            member: _version_in(self._coordinator.capabilities(
                membership.GROUP, member)) for member in members}
        self._reused = 0
        return self._versions.values()

    def allows(self, release: str) -> bool:
        """May this member use behaviour introduced in ``release``?"""
        return is_at_least(self.effective(), release)

    def object_version(self, name: str) -> str:
        """The version to publish object ``name`` at."""
        return RELEASES[self.effective()]['objects'][name]

    def events(self) -> tuple[str, ...]:
        """The events every live member knows."""
        return RELEASES[self.effective()]['events']

    def forget(self) -> None:
        """Look at the group again on the next question, reading every
        member's version."""
        with self._lock:
            self._at = None
            self._versions = {}
