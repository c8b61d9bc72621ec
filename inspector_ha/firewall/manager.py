"""The HA PXE firewall of one process: at most one host's PXE open.

Every process with a firewall driver joins the firewall party by
campaigning for the leadership ``firewall``
(:class:`inspector_ha.coordination.election.Election`). All members keep the
black-list (built from Ironic at start, kept fresh by the periodic sync
and the black-list channel) and block their PXE service completely. The
elected leader alone builds the white-list and turns its pass rule on,
but only after ``[pxe_filter] open_lease`` has passed since its election:
the old leader's pass rule has expired by then (the nftables driver
enforces that in the kernel), since it renews only after proving, by
the SQL epoch, that it still leads. That is the fence for a DHCP server,
which cannot check tokens.

On party shrinkage (the group watch), on SIGTERM and on any exception a
member resets: white-list emptied, pass rule off, PXE blocked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from inspector_ha.common import lifecycle as lifecycle_mod
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.coordination import election as election_mod
from inspector_ha.db import api as db_api
from inspector_ha.firewall import base
from inspector_ha.firewall import bus as bus_mod
from inspector_ha.firewall import lists as lists_mod
from inspector_ha.firewall import sources

LOG = logging.getLogger(__name__)
#: The name of the firewall's leadership.
LEADERSHIP = 'firewall'


class Firewall(threading.Thread):
    """The firewall party member of this process.

    ``election`` is the ``firewall`` leadership, ``store`` is read for
    the white-list, ``opts`` is the ``[pxe_filter]`` group, ``campaign``
    says when to try for the leadership while another member holds it.
    ``catch_up``: seconds after :meth:`catch_up` (this member joined the
    group) at which a leader reads the white-list again besides every
    ``whitelist_period``: the workers announce no change while they
    count no member that runs a firewall
    (:func:`inspector_ha.coordination.releases.counted_after`).
    """

    def __init__(self, *, driver: base.Driver, bus: bus_mod.Bus,
                 election: election_mod.Election, store: db_api.Store,
                 lifecycle: lifecycle_mod.Lifecycle, opts: Any,
                 campaign: election_mod.Campaign,
                 catch_up: Iterable[float] = ()) -> None:
        super().__init__(name='firewall', daemon=True)
        self.driver = driver
        self.bus = bus
        self.lists = lists_mod.Lists(opts.deny_unknown_macs)
        self.reset = threading.Event()
        self._election = election
        self._store = store
        self._life = lifecycle
        self._stopping = lifecycle.stop
        self._opts = opts
        self._campaign_schedule = campaign
        self._lock = threading.Lock()
        self._polled = 0.0
        self._armed_at: float | None = None
        self._catch_up_after = tuple(catch_up)
        #: When (monotonic) the catch-up reads are due, soonest first.
        self._catch_ups_due: list[float] = []
        self._catch_ups_lock = threading.Lock()

    @property
    def epoch(self) -> int | None:
        """This member's epoch while it leads the firewall, else None."""
        return self._election.epoch

    def run(self) -> None:
        try:
            self._run()
        except retry.UNAVAILABLE_OR_STOPPING as exc:
            self._life.fail(exc)
        finally:
            self.block()

    def catch_up(self) -> None:
        """This member joined the group (again): until the workers count
        it, they send it no white-list change."""
        now = time.monotonic()
        with self._catch_ups_lock:
            self._catch_ups_due = sorted(now + after
                                         for after in self._catch_up_after)

    def _run(self) -> None:
        with self._lock:
            self.driver.init()
        self.bus.serve(self.lists)
        while not self._stopping.is_set():
            try:
                self._campaign()
            except retry.UNAVAILABLE_OR_STOPPING:
                raise
            except Exception:
                LOG.exception('Firewall failed; PXE blocked')
                self.block()
                self._stopping.wait(self._opts.open_lease)

    def _campaign(self) -> None:
        """Apply the black-list (PXE blocked); try for the leadership when
        a try is due (at once after a reset: the group shrank); wait for
        a list change or the next try."""
        self._apply(None)
        campaign = self._campaign_schedule
        if campaign.try_if_due(self.reset, self._hold):
            return
        self.lists.changed.wait(campaign.wait_time())

    def _hold(self) -> bool:
        return self._election.hold(self._lead)

    def _lead(self, epoch: int) -> None:
        # NOTE: white-list changes come only to the leader (bus module).
        channel = (bus_mod.LeaderChannel(self.bus, self.lists)
                   if self._opts.whitelist_pubsub else None)
        try:
            self._lead_open(epoch, channel)
        finally:
            if channel is not None:
                channel.close()
            self.block()

    def _lead_open(self, epoch: int,
                   channel: bus_mod.LeaderChannel | None = None) -> None:
        self.reset.clear()
        LOG.info('Leading the firewall with epoch %d; opening PXE in '
                 '%.1f s', epoch, self._opts.open_lease)
        # NOTE: the whole lease, whatever list changes meanwhile: before it
        # has passed, the old leader's pass rule may still be armed.
        self._stopping.wait(self._opts.open_lease)
        if self._stopping.is_set() or self.reset.is_set():
            return
        self._poll_whitelist()
        # NOTE: a change announced before the channel started (the broker
        # slow or down) reached no one: the store is read again once it has.
        unheard = channel is not None and not channel.started.is_set()
        self._armed_at = None
        while not self._stopping.is_set() and not self.reset.is_set():
            self._store.transaction(self._election.fence)
            self._open()
            self._pause(self._opts.open_lease / 3)
            if unheard and channel is not None and channel.started.is_set():
                unheard = False
                self._poll_whitelist()
            else:
                self._poll_whitelist(due_only=True)

    def _open(self) -> None:
        """Apply the leader's state if it changed, else renew its lease."""
        # NOTE: building the black-list sets changed; until then, pause
        # between fences whatever else changes (cleared before the check,
        # so the wake-up of the building is kept).
        self.lists.changed.clear()
        self.lists.urgent.clear()
        if not self.lists.black_built.is_set():
            LOG.info('Black-list not built yet; PXE stays blocked')
            return
        self._note_lease()
        self._apply(self._opts.open_lease, renew=True)
        self._armed_at = time.monotonic()

    def _note_lease(self) -> None:
        """Log the first opening, and any lapse of the lease (a renewal
        later than the lease: PXE was closed in between)."""
        now, lease = time.monotonic(), self._opts.open_lease
        if self._armed_at is None:
            state = self.lists.state(lease)
            LOG.info('Opening PXE: %d white-listed, %d black-listed MACs',
                     len(state.whitelist), len(state.blacklist))
        elif now - self._armed_at > lease:
            LOG.warning('PXE lease lapsed: renewed %.2f s after arming it '
                        'for %.1f s', now - self._armed_at, lease)

    def _apply(self, open_for: float | None, renew: bool = False) -> None:
        """Apply the lists' state if it changed (else renew the lease)."""
        self.lists.changed.clear()
        self.lists.urgent.clear()
        state = self.lists.state(open_for)
        with self._lock:
            if state != self.driver.applied:
                self.driver.apply(state)
                _report(state)
            elif renew and open_for is not None:
                self.driver.renew(open_for)

    def _pause(self, seconds: float) -> None:
        """Wait up to ``seconds``, waking early on a list change (or a
        reset). The white-list changes that follow a change within
        ``[pxe_filter] apply_delay`` (and ``seconds``) are gathered, so a
        burst of starts and ends costs one fence and one firewall command,
        not one each; a black-list change or a reset ends the gathering
        (:attr:`Lists.urgent`)."""
        deadline = time.monotonic() + seconds
        if not self.lists.changed.wait(seconds):
            return
        gather = min(self._opts.apply_delay, deadline - time.monotonic())
        if gather > 0:
            self.lists.urgent.wait(gather)

    def _poll_whitelist(self, due_only: bool = False) -> None:
        period = self._opts.whitelist_period
        if due_only and not self._whitelist_due(period):
            return
        self.lists.replace_white(self._store.transaction(
            sources.under_introspection))

    def _whitelist_due(self, period: float) -> bool:
        now = time.monotonic()
        # NOTE: under the lock: catch_up() may put a new list (a rejoin).
        with self._catch_ups_lock:
            due = self._catch_ups_due
            caught_up = bool(due) and due[0] <= now
            if caught_up:
                self._catch_ups_due = [at for at in due if at > now]
        if caught_up or (period and now - self._polled >= period):
            self._polled = now
            return True
        return False

    def interrupt(self) -> None:
        """The group shrank: give up leading, reset and campaign again."""
        self.reset.set()
        self.lists.urgent.set()
        self.lists.changed.set()

    def block(self) -> None:
        """Reset: white-list and pass rule gone, PXE blocked."""
        self.lists.clear_white()
        try:
            with self._lock:
                self.driver.block()
        except Exception:
            LOG.exception('Could not block PXE')
        else:
            metrics.PXE_OPEN.set(0)
            metrics.series(metrics.PXE_LIST_SIZE, 'whitelist').set(0)

    def describe(self) -> dict[str, Any]:
        info = self.driver.describe()
        info['epoch'] = self.epoch
        return info


def _report(state: base.State) -> None:
    """The applied ``state`` as metrics: list sizes, open or not."""
    metrics.PXE_OPEN.set(1 if state.is_open else 0)
    for name, macs in (('whitelist', state.whitelist),
                       ('blacklist', state.blacklist)):
        metrics.series(metrics.PXE_LIST_SIZE, name).set(len(macs))


#: How many of the elected lister's periods its announced black-list
#: stands for a member's own listing (its listings do not start in step
#: with the member's periods).
FOLLOW_PERIODS = 1.5


def follow_for(opts: Any) -> float:
    """Seconds an announced whole black-list stands for a member's own
    listing under ``[pxe_filter]`` ``opts``; 0: the member always lists."""
    if not opts.blacklist_pubsub:
        return 0.0
    return FOLLOW_PERIODS * opts.blacklist_list_period


class BlacklistSync(threading.Thread):
    """Builds the black-list from Ironic at start, then every ``period``
    seconds; ``list_ports()`` is
    :func:`inspector_ha.firewall.sources.ironic_ports` bound to the Ironic
    client. A period is skipped while a whole black-list announced by the
    elected lister came in the last ``follow_for`` seconds."""

    def __init__(self, lists: lists_mod.Lists,
                 list_ports: Callable[[], Iterable[tuple[str, str]]],
                 period: float, stop: threading.Event,
                 follow_for: float = 0.0) -> None:
        super().__init__(name='firewall-sync', daemon=True)
        self._lists = lists
        self._list_ports = list_ports
        self._period = period
        self._stopping = stop
        self._follow_for = follow_for

    def run(self) -> None:
        """Sync at a fixed rate: a listing starts every period (or at once
        when the last one took longer), so a new port is listed within
        one period and applied one listing later."""
        period = self._period
        try:
            began = time.monotonic()
            self._sync()
            while period and not self._stopping.wait(
                    max(0.0, began + period - time.monotonic())):
                began = time.monotonic()
                if not (self._follow_for and self._lists.announced_within(
                        self._follow_for)):
                    self._sync()
        except retry.Interrupted:
            pass

    def _sync(self) -> None:
        # NOTE: Ironic unreachable is not a reason to stop the process
        # (upstream skips the sync too); the black-list stays as it is.
        try:
            self._lists.replace_black(dict(self._list_ports()))
        except retry.Interrupted:
            raise
        except retry.BackendUnavailable as exc:
            LOG.warning('Cannot list Ironic ports, black-list unchanged: '
                        '%s', exc)
        except Exception:
            LOG.exception('Cannot list Ironic ports; black-list unchanged')
