"""The singleton periodic tasks, each run by its elected leader.

Each function takes ``(service, fence)`` and calls ``fence(session)``
first in every transaction that writes, so a deposed leader writes
nothing (see :mod:`inspector_ha.engine.leadership`).
"""

import datetime
import logging

import sqlalchemy as sa

from inspector_ha.common import timeutils
from inspector_ha.db import models
from inspector_ha.db import requests
from inspector_ha.engine import leadership
from inspector_ha.firewall import watcher
from inspector_ha.fsm import states as st

LOG = logging.getLogger(__name__)


def redrive(service, fence):
    """Publish again requests whose message may have been lost."""
    stale = service.store.transaction(_touch_stale, fence,
                                      service.conf.worker.redrive_after)
    _publish(service, stale)
    if stale:
        LOG.info('Re-drove %d requests', len(stale))


def time_out(service, fence):
    """Queue a timeout request for every introspection past its time."""
    if service.conf.timeout > 0:
        _publish(service, service.store.transaction(
            _add_timeouts, fence, service.conf.timeout))


class IronicSync:
    """Queue a delete request for every node Ironic no longer has.

    A node is taken for gone only when two listings in a row miss it, the
    second begun after the first run read our nodes. One listing is not
    enough: a node created in Ironic and started while Ironic was being
    listed is in our table but not in that listing. No clocks compared.
    """

    def __init__(self):
        self._suspects = frozenset()

    def __call__(self, service, fence):
        in_ironic = service.ironic.node_uuids()
        added, self._suspects = service.store.transaction(
            _add_deletes, fence, in_ironic, self._suspects)
        if added:
            LOG.info('Ironic no longer has nodes %s: deleting them',
                     sorted(r.node_uuid for r in added))
        _publish(service, added)


def clean_up_data(service, fence):
    """Drop introspection data and closed requests past their expiry."""
    service.store.transaction(_clean_up, fence,
                              service.conf.periodic.data_expiry)


def _publish(service, added):
    for request in added:
        service.publisher.publish(request.id, request.node_uuid,
                                  request.event)


def _touch_stale(session, fence, older_than):
    fence(session)
    stale = requests.stale(session, older_than)
    requests.touch(session, [r.id for r in stale])
    return stale


def _add_timeouts(session, fence, timeout):
    fence(session)
    cutoff = timeutils.utcnow() - datetime.timedelta(seconds=timeout)
    table = models.Node
    expired = session.scalars(sa.select(table).where(
        table.finished_at.is_(None), table.started_at < cutoff,
        table.state.not_in(list(st.FINAL_STATES)))).all()
    added = [requests.add_once(session, n.uuid, st.TIMEOUT, n.attempt)
             for n in expired]
    return [r for r in added if r is not None]


def _add_deletes(session, fence, in_ironic, suspects):
    """Delete requests for the missing ``suspects``; the new suspects."""
    fence(session)
    missing = frozenset(session.scalars(sa.select(models.Node.uuid))) - \
        frozenset(in_ironic)
    added = [requests.add_once(session, u, st.DELETE, None)
             for u in missing & suspects]
    return [r for r in added if r is not None], missing


def _clean_up(session, fence, expiry):
    fence(session)
    cutoff = timeutils.utcnow() - datetime.timedelta(seconds=expiry)
    finished = sa.select(models.Node.uuid).where(
        models.Node.finished_at < cutoff)
    session.execute(sa.delete(models.IntrospectionData).where(
        models.IntrospectionData.node_uuid.in_(finished)))
    session.execute(sa.delete(models.Request).where(
        models.Request.status.not_in(requests.OPEN),
        models.Request.updated_at < cutoff))


def tasks(service):
    """The periodic tasks this configuration enables, not yet started."""
    conf = service.conf
    wanted = [('timeout', conf.clean_up_period, time_out),
              ('redrive', conf.worker.redrive_period, redrive),
              ('ironic_sync', conf.periodic.ironic_sync_period,
               IronicSync()),
              ('data_cleanup', conf.periodic.data_cleanup_period,
               clean_up_data)]
    found = [leadership.LeaderTask(service, name, period, func)
             for name, period, func in wanted if period]
    if service.firewall is not None and conf.pxe_filter.port_watch_period:
        # NOTE: it writes nothing, so its (frequent) runs are not logged.
        found.append(leadership.LeaderTask(
            service, 'port_watch', conf.pxe_filter.port_watch_period,
            watcher.PortWatcher(service.bus), log_runs=False))
    return found
