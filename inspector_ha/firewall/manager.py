"""The HA PXE firewall of one process: at most one host's PXE open.

Every process with a firewall driver joins the firewall party by
campaigning for the tooz lock ``leader.firewall``. All members keep the
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

import logging
import threading
import time

from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.db import leaders
from inspector_ha.firewall import lists as lists_mod
from inspector_ha.firewall import sources

LOG = logging.getLogger(__name__)
LEADERSHIP = 'firewall'


class Firewall(threading.Thread):
    def __init__(self, service, driver, bus):
        super().__init__(name='firewall', daemon=True)
        self._svc = service
        self._opts = service.conf.pxe_filter
        self.driver = driver
        self.bus = bus
        self.lists = lists_mod.Lists(self._opts.deny_unknown_macs)
        self.reset = threading.Event()
        self.epoch = None
        self._lock = threading.Lock()
        self._polled = 0.0
        self._armed_at = None

    def run(self):
        try:
            self._run()
        except (retry.BackendUnavailable, retry.Interrupted) as exc:
            self._svc.fail(exc)
        finally:
            self.block()

    def _run(self):
        with self._lock:
            self.driver.init()
        self.bus.serve(self.lists)
        while not self._svc.stop.is_set():
            try:
                self._campaign()
            except (retry.BackendUnavailable, retry.Interrupted):
                raise
            except Exception:
                LOG.exception('Firewall failed; PXE blocked')
                self.block()
                self._svc.stop.wait(self._opts.open_lease)

    def _campaign(self):
        self._apply(None)
        lock = self._svc.coordinator.lock('leader.' + LEADERSHIP)
        if not lock.try_acquire():
            self.lists.changed.wait(self._svc.conf.periodic.campaign_period)
            return
        try:
            self._lead()
        finally:
            self.epoch = None
            self.block()
            lock.release()

    def _lead(self):
        self.reset.clear()
        self.epoch = self._svc.store.transaction(
            leaders.elect, LEADERSHIP, self._svc.member_id)
        LOG.info('Leading the firewall with epoch %d; opening PXE in '
                 '%.1f s', self.epoch, self._opts.open_lease)
        # NOTE: the whole lease, whatever list changes meanwhile: before it
        # has passed, the old leader's pass rule may still be armed.
        self._svc.stop.wait(self._opts.open_lease)
        if self._svc.stop.is_set() or self.reset.is_set():
            return
        self._poll_whitelist()
        self._armed_at = None
        while not self._svc.stop.is_set() and not self.reset.is_set():
            self._svc.store.transaction(self._fence)
            self._open()
            self._pause(self._opts.open_lease / 3)
            self._poll_whitelist(due_only=True)

    def _fence(self, session):
        leaders.fence(session, LEADERSHIP, self.epoch)

    def _open(self):
        """Apply the leader's state if it changed, else renew its lease."""
        if not self.lists.black_built.is_set():
            LOG.info('Black-list not built yet; PXE stays blocked')
            return
        self._note_lease()
        self._apply(self._opts.open_lease, renew=True)
        self._armed_at = time.monotonic()

    def _note_lease(self):
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

    def _apply(self, open_for, renew=False):
        """Apply the lists' state if it changed (else renew the lease)."""
        self.lists.changed.clear()
        state = self.lists.state(open_for)
        with self._lock:
            if state != self.driver.applied:
                self.driver.apply(state)
                _report(state)
            elif renew:
                self.driver.renew(open_for)

    def _pause(self, seconds):
        """Wait, waking early on a list change (or a reset)."""
        self.lists.changed.wait(seconds)

    def _poll_whitelist(self, due_only=False):
        period = self._opts.whitelist_period
        if due_only and not self._whitelist_due(period):
            return
        self.lists.replace_white(self._svc.store.transaction(
            sources.under_introspection))

    def _whitelist_due(self, period):
        now = time.monotonic()
        if period and now - self._polled >= period:
            self._polled = now
            return True
        return False

    def block(self):
        """Reset: white-list and pass rule gone, PXE blocked."""
        self.lists.clear_white()
        try:
            with self._lock:
                self.driver.block()
        except Exception:
            LOG.exception('Could not block PXE')
        else:
            metrics.PXE_OPEN.set(0)
            metrics.PXE_LIST_SIZE.labels('whitelist').set(0)

    def describe(self):
        info = self.driver.describe()
        info['epoch'] = self.epoch
        return info


def _report(state):
    """The applied ``state`` as metrics: list sizes, open or not."""
    metrics.PXE_OPEN.set(1 if state.is_open else 0)
    metrics.PXE_LIST_SIZE.labels('whitelist').set(len(state.whitelist))
    metrics.PXE_LIST_SIZE.labels('blacklist').set(len(state.blacklist))


class BlacklistSync(threading.Thread):
    """Builds the black-list from Ironic at start, then every period."""

    def __init__(self, service, lists):
        super().__init__(name='firewall-sync', daemon=True)
        self._svc = service
        self._lists = lists

    def run(self):
        """Sync at a fixed rate: a listing starts every period (or at once
        when the last one took longer), so a new port is listed within
        one period and applied one listing later."""
        period = self._svc.conf.pxe_filter.sync_period
        try:
            began = time.monotonic()
            self._sync()
            while period and not self._svc.stop.wait(
                    max(0.0, began + period - time.monotonic())):
                began = time.monotonic()
                self._sync()
        except retry.Interrupted:
            pass

    def _sync(self):
        # NOTE: Ironic unreachable is not a reason to stop the process
        # (upstream skips the sync too); the black-list stays as it is.
        try:
            self._lists.replace_black(dict(sources.ironic_ports(self._svc)))
        except retry.Interrupted:
            raise
        except retry.BackendUnavailable as exc:
            LOG.warning('Cannot list Ironic ports, black-list unchanged: '
                        '%s', exc)
        except Exception:
            LOG.exception('Cannot list Ironic ports; black-list unchanged')
