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
The same look tells whether any live member may run a PXE firewall
(:meth:`Releases.firewall_anywhere`): one that names it among its roles,
or one of a release before :data:`FIREWALL_ROLE_SINCE`, which does not.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

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
    '0.3.0': {
        'objects': {'TransitionRequest': '1.1', 'WhitelistChange': '1.0',
                    'BlacklistChange': '1.0', 'BlacklistSnapshot': '1.0'},
        'events': ('start', 'wait', 'process', 'finish', 'error',
                   'timeout', 'abort', 'abort_end', 'reapply', 'delete'),
    },
}
OLDEST = '0.1.0'
CURRENT = '0.3.0'
#: Seconds for which a look of :class:`Releases` may take the versions an
#: earlier look read, while the group's members are the same: a member's
#: version never changes while it lives, but a 0.2.0 member's id
#: (``host.pid``, without the random part of later releases) may come
#: back as another release, as a container restarted within its lease
#: keeps its host name and PID, and no look sees it leave.
REREAD_AFTER = 20.0
#: The release from which a member that runs a PXE firewall names it among
#: its roles (:data:`membership.FIREWALL_ROLE`); an older one may run a
#: firewall without saying so.
FIREWALL_ROLE_SINCE = '0.2.0'


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


def object_version_in(release: str, name: str) -> str:
    """The version of object ``name`` that ``release`` reads."""
    return RELEASES[release]['objects'][name]


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


def counted_after(ttl: float) -> tuple[float, float]:
    """Seconds after a member joins the group by which every member's
    :meth:`Releases.firewall_anywhere` (looking every ``ttl``) counts it:
    a ``ttl``; and :data:`REREAD_AFTER` more had it come back under an
    id whose roles were read before. A second more for each."""
    return ttl + 1.0, REREAD_AFTER + ttl + 1.0


class Seen(NamedTuple):
    """What a look read of one member."""

    #: The version it announces, or None.
    version: Any
    #: Whether it may run a PXE firewall.
    firewall: bool


def seen_in(capabilities: Any) -> Seen:
    """A member's version, and whether it may run a PXE firewall: it
    names the role, or is of a release before roles named it."""
    version = _version_in(capabilities)
    roles = (capabilities.get('roles') if isinstance(capabilities, dict)
             else None)
    named = isinstance(roles, list) and membership.FIREWALL_ROLE in roles
    return Seen(version, named or not is_at_least(release_of(version),
                                                  FIREWALL_ROLE_SINCE))


class Releases:
    """The effective release of the cluster, as this member sees it,
    and whether a live member may run a PXE firewall.

    ``coordinator`` is the service's :class:`tooz_backend.Coordinator`
    (the member group is read); ``pin`` is
    ``[DEFAULT] pin_release_version`` (None: automatic).

    A look lists the group; it reads each member's capabilities (a tooz
    call per member) only when the members changed since the look
    before, after :meth:`forget`, and when what it has read is
    :data:`REREAD_AFTER` seconds old.
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
        #: What a look read of each member, by member id, and when; how
        #: many times :meth:`forget` was called (a look it overtook keeps
        #: nothing).
        self._seen: dict[bytes, Seen] = {}
        self._read_at: float | None = None
        self._forgotten = 0
        #: Whether the last look saw a member that may run a PXE firewall
        #: (None: no look has answered since the start or a forget), and
        #: when it began listing the members.
        self._firewalls: bool | None = None
        self._listed_at = 0.0

    def effective(self) -> str:
        """The release every live member (and the pin) understands.

        The group is read on a thread of its own, waited for ``wait``
        seconds at most: a coordination backend that does not answer
        never holds up a caller (an API answer) for longer; meanwhile the
        answer is the oldest release, which is always safe.
        """
        with self._lock:
            looking = self._look_if_stale()
        if looking is not None:
            looking.join(self._wait)
        with self._lock:
            if self._looking is not None or self._cached is None:
                return OLDEST
            return self._cached

    def _look_if_stale(self) -> threading.Thread | None:
        """The look under way, started if the last is ``ttl`` old
        (called holding the lock)."""
        now = self._clock()
        stale = self._at is None or now - self._at >= self._ttl
        if stale and self._looking is None:
            self._looking = threading.Thread(
                target=self._refresh, daemon=True, name='releases')
            self._looking.start()
        return self._looking

    def _refresh(self) -> None:
        with self._lock:
            forgotten, known = self._forgotten, (self._seen, self._read_at)
        try:
            result, seen, read_at, listed_at = self._look(*known)
        except BaseException:
            with self._lock:
                self._looking = None
                self._firewalls = None
            raise
        with self._lock:
            if forgotten == self._forgotten:
                self._seen, self._read_at = seen, read_at
                self._cached, self._at = result, self._clock()
                self._firewalls = (None if read_at is None else any(
                    member.firewall for member in seen.values()))
                self._listed_at = listed_at
            else:
                # NOTE: forgotten while looking: the look may have taken
                # the versions forget() dropped. The oldest release until
                # the next look.
                self._cached = None
            self._looking = None

    def _look(self, known: dict[bytes, Seen], read_at: float | None
              ) -> tuple[str, dict[bytes, Seen], float | None, float]:
        """The effective release, with what it rests on by member id,
        when that was read (None: the group could not be read), and when
        the listing of the members began: ``known`` and ``read_at`` again
        while the members are the same and what was read is not
        :data:`REREAD_AFTER` seconds old, else read now."""
        listed_at = self._clock()
        try:
            members = self._coordinator.member_ids(membership.GROUP)
            now = self._clock()
            if (members != known.keys() or read_at is None or
                    now - read_at >= REREAD_AFTER):
                known, read_at = {
                    member: seen_in(self._coordinator.capabilities(
                        membership.GROUP, member)) for member in members
                }, now
        except Exception as exc:
            LOG.warning('Cannot read the member versions (%r); speaking '
                        'release %s', exc, OLDEST)
            return OLDEST, {}, None, listed_at
        return lowest([seen.version for seen in known.values()],
                      self._pin), known, read_at, listed_at

    def allows(self, release: str) -> bool:
        """May this member use behaviour introduced in ``release``?"""
        return is_at_least(self.effective(), release)

    def object_version(self, name: str) -> str:
        """The version to publish object ``name`` at."""
        return object_version_in(self.effective(), name)

    def events(self) -> tuple[str, ...]:
        """The events every live member knows."""
        return RELEASES[self.effective()]['events']

    def firewall_anywhere(self) -> bool:
        """Whether a live member may run a PXE firewall. Never waits: a
        look that is due is started for the next question (ask
        :meth:`effective` first to wait for it as it waits). False only
        from a look that saw none in a listing begun less than ``ttl``
        ago, so a member that joined the group ``ttl`` ago is counted
        (unless it came back under an id whose roles were read less than
        :data:`REREAD_AFTER` ago); True when no look has answered since
        the start, a :meth:`forget` or a failure."""
        with self._lock:
            self._look_if_stale()
            return (self._firewalls is not False or
                    self._clock() - self._listed_at >= self._ttl)

    def forget(self) -> None:
        """Look at the group again on the next question, reading every
        member's capabilities."""
        with self._lock:
            self._at = None
            self._seen, self._read_at = {}, None
            self._forgotten += 1
            self._firewalls = None
