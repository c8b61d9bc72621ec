"""Singleton periodic tasks: one leader per task, fenced by an SQL epoch.

Each task is a thread that campaigns for its leadership
(:class:`inspector_ha.coordination.election.Election`); the winner runs
the task every period. Every run is logged and every write is made in a
transaction that first checks the epoch: once another member has been
elected, this one's writes are refused and it steps down at once.

The reset flag (not the process stop flag) ends a leadership: set when
the group shrinks, so that every member campaigns again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from inspector_ha.common import lifecycle as lifecycle_mod
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.coordination import election as election_mod
from inspector_ha.ironic import client as ironic_client

LOG = logging.getLogger(__name__)


class LeaderLoop(threading.Thread):
    """Runs ``job(fence)`` every ``period`` while leading ``election``,
    at a fixed rate: a run starts one period after the last one started
    (at once when that one took longer), as futurist's periodic workers
    schedule upstream's, so a slow run does not stretch the period that
    other members count on (the black-list lister's, for one).

    ``fence(conn)`` must be called first in every transaction of
    ``job`` that writes. ``lifecycle`` is the process's stop flag and
    failure; ``campaign`` says when to try for the leadership while
    another member holds it (hurrying after a reset). Between tries it
    waits on the reset flag, which shutdown sets after the stop flag.
    """

    def __init__(self, *, election: election_mod.Election, period: float,
                 job: Callable[[election_mod.Fence], object],
                 lifecycle: lifecycle_mod.Lifecycle,
                 campaign: election_mod.Campaign,
                 log_runs: bool = True) -> None:
        super().__init__(name='leader-' + election.name, daemon=True)
        self.job_name = election.name
        self.reset = threading.Event()
        self.fenced_writes = 0
        self._election = election
        self._period = period
        self._job = job
        self._life = lifecycle
        self._campaign = campaign
        self._log_runs = log_runs

    @property
    def epoch(self) -> int | None:
        """This member's epoch while it leads, else None."""
        return self._election.epoch

    def run(self) -> None:
        try:
            self._campaign_forever()
        except retry.UNAVAILABLE_OR_STOPPING as exc:
            self._life.fail(exc)

    def _campaign_forever(self) -> None:
        stop, campaign = self._life.stop, self._campaign
        while not stop.is_set():
            if campaign.try_if_due(self.reset, self._hold) is None:
                self.reset.wait(campaign.wait_time())

    def _hold(self) -> bool:
        return self._election.hold(self._lead)

    def _lead(self, epoch: int) -> None:
        self.reset.clear()
        LOG.info('Leading %s with epoch %d', self.job_name, epoch)
        metrics.series(metrics.LEADER_EPOCH, self.job_name).set(epoch)
        try:
            while not self._life.stop.is_set() and not self.reset.is_set():
                began = time.monotonic()
                if not self._run_once():
                    return
                self.reset.wait(max(0.0, began + self._period
                                    - time.monotonic()))
        finally:
            metrics.series(metrics.LEADER_EPOCH, self.job_name).set(0)

    def _run_once(self) -> bool:
        try:
            if self._log_runs:
                self._election.record_run()
            self._job(self._election.fence)
            metrics.ran(self.job_name, 'ok')
        except election_mod.Fenced as exc:
            self.fenced_writes += 1
            metrics.fenced(self.job_name)
            LOG.warning('Stepping down: %s', exc)
            return False
        except retry.BackendUnavailable as exc:
            if exc.backend != ironic_client.BACKEND:
                raise
            # NOTE: restarting cannot bring Ironic back: one line a period.
            LOG.warning('Periodic job %s skipped: %s', self.job_name, exc)
            metrics.ran(self.job_name, 'skipped')
        except retry.Interrupted:
            raise
        except Exception:
            LOG.exception('Periodic job %s failed', self.job_name)
            metrics.ran(self.job_name, 'failed')
        return True
