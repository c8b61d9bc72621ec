"""Periodic work: outbox re-drive and introspection timeouts.

Each runs in its own thread and sleeps on the stop event. A run is
guarded by a non-blocking tooz lock so that normally one member does it;
running twice is harmless (requests are idempotent by id).
"""

import datetime
import logging
import threading
import uuid

import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.common import timeutils
from inspector_ha.db import models
from inspector_ha.db import requests
from inspector_ha.fsm import states as st

LOG = logging.getLogger(__name__)


class PeriodicTask(threading.Thread):
    def __init__(self, service, name, period, func):
        super().__init__(name='periodic-' + name, daemon=True)
        self._svc = service
        self._period = period
        self._func = func
        self._lock = service.coordinator.lock('periodic.' + name)

    def run(self):
        while not self._svc.stop.wait(self._period):
            try:
                self._once()
            except (retry.BackendUnavailable, retry.Interrupted) as exc:
                self._svc.fail(exc)
            except Exception:
                LOG.exception('Periodic task %s failed', self.name)

    def _once(self):
        if not self._lock.try_acquire():
            return
        try:
            self._func(self._svc)
        finally:
            self._lock.release()


def redrive(service):
    """Publish again requests whose message may have been lost."""
    stale = service.store.transaction(
        requests.stale, service.conf.worker.redrive_after)
    if not stale:
        return
    service.store.transaction(requests.touch, [r.id for r in stale])
    for request in stale:
        service.publisher.publish(request.id, request.node_uuid,
                                  request.event)
    LOG.info('Re-drove %d requests', len(stale))


def time_out(service):
    """Queue a timeout request for every introspection past its time."""
    timeout = service.conf.timeout
    if not timeout:
        return
    added = service.store.transaction(_add_timeouts, timeout)
    for request in added:
        service.publisher.publish(request.id, request.node_uuid,
                                  request.event)


def _add_timeouts(session, timeout):
    cutoff = timeutils.utcnow() - datetime.timedelta(seconds=timeout)
    table = models.Node
    expired = session.scalars(sa.select(table).where(
        table.finished_at.is_(None), table.started_at < cutoff,
        table.state.not_in(list(st.FINAL_STATES)))).all()
    added = []
    for node in expired:
        request_id = str(uuid.uuid5(uuid.NAMESPACE_URL, 'timeout/%s/%d' % (
            node.uuid, node.attempt)))
        if requests.get(session, request_id) is None:
            added.append(requests.add(session, node.uuid, st.TIMEOUT,
                                      node.attempt, request_id=request_id))
    return added


def start_all(service):
    worker = service.conf.worker
    tasks = []
    if service.conf.clean_up_period:
        tasks.append(PeriodicTask(service, 'timeout',
                                  service.conf.clean_up_period, time_out))
    if worker.redrive_period:
        tasks.append(PeriodicTask(service, 'redrive', worker.redrive_period,
                                  redrive))
    for task in tasks:
        task.start()
    return tasks
