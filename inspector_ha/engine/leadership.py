"""Singleton periodic tasks: one leader per task, fenced by an SQL epoch.

Each task is a thread that campaigns for the tooz lock ``leader.<task>``
(an election built on locks works on every tooz backend; on Redis and
ZooKeeper it is what tooz's own election does). The winner bumps the
task's epoch in SQL, then runs the task every period. Every run is logged
and every write is made in a transaction that first checks the epoch
(:func:`inspector_ha.db.leaders.fence`): once another member has been
elected, this one's writes are refused and it steps down at once.

The reset flag (not the process stop flag) ends a leadership: set when
the group shrinks, so that every member campaigns again.
"""

import logging
import threading

from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.db import leaders
from inspector_ha.ironic import client as ironic_client

LOG = logging.getLogger(__name__)


class LeaderTask(threading.Thread):
    """Runs ``func(service, fence)`` every ``period`` while leading.

    ``fence(session)`` must be called first in every transaction of
    ``func`` that writes.
    """

    def __init__(self, service, name, period, func, log_runs=True):
        super().__init__(name='leader-' + name, daemon=True)
        self._log_runs = log_runs
        self.task = name
        self.epoch = None
        self.reset = threading.Event()
        self.fenced_writes = 0
        self._svc = service
        self._period = period
        self._func = func

    def run(self):
        try:
            self._campaign_forever()
        except (retry.BackendUnavailable, retry.Interrupted) as exc:
            self._svc.fail(exc)

    def _campaign_forever(self):
        stop = self._svc.stop
        while not stop.is_set():
            lock = self._svc.coordinator.lock('leader.' + self.task)
            if lock.try_acquire():
                try:
                    self._lead()
                finally:
                    self.epoch = None
                    metrics.LEADER_EPOCH.labels(self.task).set(0)
                    lock.release()
            stop.wait(self._svc.conf.periodic.campaign_period)

    def _lead(self):
        self.reset.clear()
        self.epoch = self._svc.store.transaction(
            leaders.elect, self.task, self._svc.member_id)
        LOG.info('Leading %s with epoch %d', self.task, self.epoch)
        metrics.LEADER_EPOCH.labels(self.task).set(self.epoch)
        while not self._svc.stop.is_set() and not self.reset.is_set():
            if not self._run_once():
                return
            self.reset.wait(self._period)

    def _run_once(self):
        try:
            if self._log_runs:
                self._svc.store.transaction(
                    leaders.record_run, self.task, self._svc.member_id,
                    self.epoch)
            self._func(self._svc, self._fence)
            metrics.ran(self.task, 'ok')
        except leaders.Fenced as exc:
            self.fenced_writes += 1
            metrics.fenced(self.task)
            LOG.warning('Stepping down: %s', exc)
            return False
        except retry.BackendUnavailable as exc:
            if exc.backend != ironic_client.BACKEND:
                raise
            # NOTE: restarting cannot bring Ironic back: one line a period.
            LOG.warning('Periodic task %s skipped: %s', self.task, exc)
            metrics.ran(self.task, 'skipped')
        except retry.Interrupted:
            raise
        except Exception:
            LOG.exception('Periodic task %s failed', self.task)
            metrics.ran(self.task, 'failed')
        return True

    def _fence(self, session):
        leaders.fence(session, self.task, self.epoch)
