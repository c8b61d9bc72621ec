"""Group membership: every process joins, heartbeats and leaves.

A member that leaves (or whose heartbeat lapses) makes every process
reset its leaderships and campaign again (the reset flag of
doc/design.md); growth of the group changes nothing. The probe of each
``watch_period`` (of each lease in an API process that leads nothing)
lists the group and tells who left since the last one (tooz's own
watchers would list it a second time).

Worker processes also join :data:`WORKERS`, whose size gives each its
share of ``[worker] cluster_concurrency``
(:mod:`inspector_ha.messaging.cluster_share`) and of ``least_ironic_calls``
(:mod:`inspector_ha.ironic.pacing`). A worker lists it when its probe
finds the member group changed (or this member joining it again), at
every probe for ``lease_timeout`` after, and every
:data:`WORKERS_RECOUNT_PERIOD` besides: a worker joins :data:`WORKERS`
before the member group and leaves it first, and its heartbeat keeps
both, so the member group changes whenever the workers do.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import tooz
from tooz import coordination

from inspector_ha.common import lifecycle as lifecycle_mod
from inspector_ha.common import retry
from inspector_ha.coordination import tooz_backend

LOG = logging.getLogger(__name__)
GROUP = b'inspector_ha.members'
#: The worker processes only.
WORKERS = b'inspector_ha.workers'
#: The role a member names (since 0.2.0) when it runs a PXE firewall.
FIREWALL_ROLE = 'firewall'
#: Seconds between two listings of :data:`WORKERS` while the member group
#: does not change (a safety net).
WORKERS_RECOUNT_PERIOD = 5.0


def new_member_id(host: str) -> str:
    """This process's id in the group: ``host.pid.<random>``. NOTE: the
    random part, since containers on one host network share the host's
    name and are each PID 1 (and one restarted keeps both): two of them
    as one member would hide each other's death from the take-over."""
    return '%s.%d.%s' % (host, os.getpid(), secrets.token_hex(3))


class Membership(threading.Thread):
    """This process in the member group.

    ``opts`` is the ``[coordination]`` group; ``shown()`` returns what,
    besides host, pid, version and roles, the member shows in its
    capabilities (``inspector-ha-status``): it is read at every probe;
    ``leads``: whether the process runs periodic jobs or the PXE
    firewall (their elections need the group's changes at once).
    A worker joins :data:`WORKERS` too (first, so that the others count
    it as soon as they see it join), and given
    ``on_workers`` tells it how many worker processes are live, at entry
    and whenever it counts them (see the module).
    """

    def __init__(self, *, coordinator: tooz_backend.Coordinator,
                 lifecycle: lifecycle_mod.Lifecycle, opts: Any, host: str,
                 roles: Iterable[str], on_shrink: Callable[[], None],
                 shown: Callable[[], dict[str, Any]] = dict,
                 on_workers: Callable[[int], None] | None = None,
                 leads: bool = True,
                 on_rejoin: Callable[[], None] | None = None) -> None:
        super().__init__(name='membership', daemon=True)
        self._coord = coordinator
        self._life = lifecycle
        self._timeout = opts.lease_timeout
        self._on_shrink = on_shrink
        self._on_rejoin = on_rejoin
        self._shown = shown
        self._on_workers = on_workers
        self._basics: dict[str, Any] = {'host': host, 'pid': os.getpid(),
                        'version': _version(), 'roles': list(roles)}
        #: Seconds between two probes: ``watch_period`` for a worker or
        #: a process that ``leads`` (periodic jobs, the PXE firewall); an
        #: API process that leads nothing needs no coordination to serve
        #: and probes once a lease (to join again if it was dropped).
        self.period = (opts.watch_period if self._is_worker or leads else
                       max(opts.watch_period, opts.lease_timeout))
        self.capabilities = dict(self._basics)
        #: The members the last probe saw.
        self._seen: set[bytes] = set()
        #: Until when (monotonic) every probe counts the workers, and when
        #: it counts them next in any case.
        self._count_until = self._next_count = 0.0
        #: Set as this member joins the group again, until it has counted
        #: (a retried probe would not see it dropped), and until
        #: ``on_rejoin`` was told.
        self._rejoined = False
        self._rejoin_untold = False

    def enter(self) -> None:
        """Join the group and see who is in it; call before ``start()``."""
        caps = json.dumps(self.capabilities).encode()
        if self._is_worker:
            self._coord.call(self._join_workers)
        self._coord.call(self._coord.join_group, GROUP, caps)
        self._seen = self._coord.call(self._member_ids, GROUP)
        if self._is_worker:
            if self._on_workers is not None:
                self._coord.call(self._count_workers)
            self._next_count = time.monotonic() + WORKERS_RECOUNT_PERIOD

    @property
    def _is_worker(self) -> bool:
        return 'worker' in self._basics['roles']

    def _note_changes(self, members: set[bytes]) -> tuple[bool, bool]:
        """Whether a member seen last time is gone (each is logged), and
        whether any came or went."""
        left, joined = self._seen - members, members - self._seen
        self._seen = members
        for member in sorted(left):
            LOG.info('Member %s left; resetting leaderships',
                     member.decode())
        return bool(left), bool(left or joined)

    def run(self) -> None:
        try:
            while not self._life.stop.wait(self.period):
                self._watch_once()
        except retry.UNAVAILABLE_OR_STOPPING as exc:
            self._life.fail(exc)
        except Exception as exc:
            LOG.exception('Membership watch failed')
            self._life.fail(exc)

    def _watch_once(self) -> None:
        try:
            # NOTE: on_shrink runs outside the retry policy: an error of
            # its own is not the backend's, and a retried probe would not
            # see the leavers again.
            left, changed = self._coord.call(self._probe)
            if left:
                self._on_shrink()
            if self._rejoin_untold:
                self._rejoin_untold = False
                if self._on_rejoin is not None:
                    self._on_rejoin()
            if self._is_worker and self._workers_due(changed):
                self._coord.call(self._count_workers)
            self._publish_counters()
        except retry.BackendUnavailable as exc:
            self._unreachable(exc)
        except coordination.ToozError as exc:
            # NOTE: kazoo may surface a lost server as a bare ToozError
            # (tooz's zookeeper driver, listing the group).
            self._unreachable(retry.BackendUnavailable('coordination', exc))

    def _workers_due(self, changed: bool) -> bool:
        """Whether this probe counts the workers (see the module)."""
        now = time.monotonic()
        if changed or self._rejoined:
            self._count_until = now + self._timeout
            self._rejoined = False
        if now < self._count_until or now >= self._next_count:
            self._next_count = now + WORKERS_RECOUNT_PERIOD
            return True
        return False

    def _unreachable(self, exc: retry.BackendUnavailable) -> None:
        """A worker must stop (the partition rule of doc/design.md); an API
        process needs no coordination to serve, so it carries on."""
        if self._is_worker:
            raise exc
        LOG.warning('Coordination unreachable: %s', exc)

    def _publish_counters(self) -> None:
        """Show what ``shown()`` returns (the fenced writes of this
        member's leaderships, its firewall state) in its capabilities."""
        shown = dict(self._basics, **self._shown())
        if shown == self.capabilities:
            return
        caps = json.dumps(shown).encode()
        try:
            self._coord.call(self._coord.update_capabilities, GROUP, caps)
        except tooz.NotImplemented:
            LOG.info('Not shown by this coordination backend: %s',
                     {k: v for k, v in shown.items()
                      if k not in self._basics})
        except coordination.MemberNotJoined:
            # NOTE: dropped between the probe and now (its heartbeat
            # lapsed): the next probe joins again, the next period shows.
            LOG.warning('Not in the group to show its capabilities (its '
                        'heartbeat lapsed); joining again at the next probe')
            return
        self.capabilities = shown

    def _probe(self) -> tuple[bool, bool]:
        """Prove the backend answers within the lease; rejoin if expelled;
        whether a member left since the last probe, and whether any came
        or went (this member joining again sets ``_rejoined`` instead).

        Some drivers (kazoo for ZooKeeper) block rather than fail while
        disconnected; a bounded round trip turns that into an error that
        the retry policy counts, so the process stops once the budget is
        spent instead of acting on a coordination it cannot see. A member
        whose heartbeat lapsed (a paused process) has been dropped from
        the group (the others reset their leaderships): it joins again.
        """
        members = self._member_ids(GROUP)
        me = self._coord.member_id.encode()
        if me not in members:
            LOG.warning('This member was dropped from the group (its '
                        'heartbeat lapsed); joining again')
            self._rejoined = self._rejoin_untold = True
            self._coord.join_group(GROUP,
                                   json.dumps(self.capabilities).encode())
        return self._note_changes(members | {me})

    def _member_ids(self, group: bytes,
                    absent_ok: bool = False) -> set[bytes]:
        """The members of ``group`` within the lease (none when it does
        not exist yet and ``absent_ok``); any other failure is a
        connection error, which the retry policy counts."""
        try:
            return self._coord.member_ids(group, self._timeout, absent_ok)
        except coordination.ToozConnectionError:
            raise
        except coordination.GroupNotCreated as exc:
            raise _not_answering(exc) from exc
        except Exception as exc:
            raise _not_answering(exc) from exc

    def _join_workers(self) -> None:
        self._coord.join_group(WORKERS, b'{}')

    def _count_workers(self) -> None:
        """Be in :data:`WORKERS` (joining again after a lapsed heartbeat)
        and tell ``on_workers`` how many are."""
        me = self._coord.member_id.encode()
        workers = self._member_ids(WORKERS, absent_ok=True)
        if me not in workers:
            self._join_workers()
            workers = set(workers) | {me}
        if self._on_workers is not None:
            self._on_workers(len(workers))

    def leave(self) -> None:
        for group in (WORKERS, GROUP) if self._is_worker else (GROUP,):
            try:
                self._coord.leave_group(group, self._timeout)
            except Exception as exc:
                LOG.warning('Could not leave the group %s (the backend will '
                            'expire the membership): %r', group.decode(),
                            exc)


def _not_answering(exc: Exception) -> coordination.ToozConnectionError:
    return coordination.ToozConnectionError(
        'coordination backend not answering: %r' % exc)


def members(coordinator: tooz_backend.Coordinator) -> dict[str, Any]:
    """``{member_id: capabilities}`` of the member group."""
    return coordinator.members(GROUP)


def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version('inspector-ha')
    except metadata.PackageNotFoundError:
        return 'unknown'
