"""Periodic work: timeouts and the outbox re-drive, driven directly."""

import datetime

import sqlalchemy as sa

from inspector_ha.db import leaders
from inspector_ha.db import models
from inspector_ha.db import requests
from inspector_ha.engine import leadership
from inspector_ha.engine import periodic
from inspector_ha.engine import worker as worker_mod
from inspector_ha.fsm import states as st
from inspector_ha.messaging import objects


def _age(session, uuid):
    session.execute(sa.update(models.Node).where(models.Node.uuid == uuid)
                    .values(started_at=datetime.datetime(2000, 1, 1)))


def _fence(service, task):
    epoch = service.store.transaction(leaders.elect, task, 'unit-test')
    return lambda session: leaders.fence(session, task, epoch)


def _open_requests(service, event):
    def query(session):
        return [r for r in session.scalars(sa.select(models.Request))
                if r.event == event]
    return service.store.transaction(query)


def test_an_introspection_past_its_timeout_gets_one_timeout_request(
        service, put_node):
    old = put_node(st.WAITING)
    put_node(st.WAITING)
    service.store.transaction(_age, old)
    periodic.time_out(service, _fence(service, 'timeout'))
    periodic.time_out(service, _fence(service, 'timeout'))
    timeouts = _open_requests(service, st.TIMEOUT)
    assert [r.node_uuid for r in timeouts] == [old]


def test_a_timeout_request_ends_the_introspection_in_error(service,
                                                           put_node):
    uuid = put_node(st.WAITING)
    service.store.transaction(_age, uuid)
    periodic.time_out(service, _fence(service, 'timeout'))
    request = _open_requests(service, st.TIMEOUT)[0]
    message = objects.TransitionRequest(request_id=request.id,
                                        node_uuid=uuid, event=st.TIMEOUT)
    assert worker_mod.Worker(service).handle(message)
    node = service.store.transaction(lambda s: s.get(models.Node, uuid))
    assert (node.state, node.error) == (st.ERROR, 'Introspection timeout')


def test_finished_introspections_never_time_out(service, put_node):
    uuid = put_node(st.FINISHED)
    service.store.transaction(_age, uuid)
    periodic.time_out(service, _fence(service, 'timeout'))
    assert _open_requests(service, st.TIMEOUT) == []


def test_the_redrive_touches_stale_open_requests_so_they_wait_again(
        service, put_node):
    uuid = put_node(st.WAITING)
    request = service.store.transaction(requests.add, uuid, st.ABORT, 1)
    service.conf.set_override('redrive_after', 1.0, group='worker')
    service.store.transaction(lambda s: s.execute(
        sa.update(models.Request).values(
            updated_at=datetime.datetime(2000, 1, 1))))
    periodic.redrive(service, _fence(service, 'redrive'))
    assert service.store.transaction(requests.stale, 1.0) == []
    assert service.store.transaction(requests.get, request.id).status == \
        requests.PENDING


def test_a_deposed_leader_counts_its_refused_write_and_publishes_it(
        service):
    task = leadership.LeaderTask(service, 'timeout', 1, periodic.time_out)
    task.epoch = service.store.transaction(leaders.elect, 'timeout', 'old')
    service.store.transaction(leaders.elect, 'timeout', 'new')
    assert task._run_once() is False
    assert task.fenced_writes == 1
    service.leader_tasks = [task]
    try:
        # NOTE: the file driver cannot update capabilities; Redis and
        # ZooKeeper show the count (tests/functional/test_leadership.py).
        service.membership._publish_counters()
    finally:
        service.leader_tasks = []
    assert service.membership.capabilities['fenced_writes'] == {
        'timeout': 1}


class _Listing:
    """Stands in for Ironic's node listing (what it returned, in order)."""

    def __init__(self, *listings):
        self._listings = list(listings)

    def node_uuids(self):
        return self._listings.pop(0)


def test_a_node_started_during_an_ironic_listing_is_not_deleted(
        service, put_node):
    node = put_node(st.WAITING)
    sync = periodic.IronicSync()
    fence = _fence(service, 'ironic_sync')
    # NOTE: the first listing began before the node was started.
    service.ironic = _Listing(set(), {node}, {node})
    sync(service, fence)
    sync(service, fence)
    sync(service, fence)
    assert _open_requests(service, st.DELETE) == []


def test_a_node_missing_from_two_listings_in_a_row_gets_one_delete(
        service, put_node):
    node = put_node(st.WAITING)
    sync = periodic.IronicSync()
    fence = _fence(service, 'ironic_sync')
    service.ironic = _Listing(set(), set(), set())
    sync(service, fence)
    assert _open_requests(service, st.DELETE) == []
    sync(service, fence)
    sync(service, fence)
    assert [r.node_uuid for r in _open_requests(
        service, st.DELETE)] == [node]


def test_a_timeout_of_zero_or_less_disables_timeouts_as_upstream(
        service, put_node):
    uuid = put_node(st.WAITING)
    service.store.transaction(_age, uuid)
    for value in (0, -1):
        service.conf.set_override('timeout', value)
        periodic.time_out(service, _fence(service, 'timeout'))
    assert _open_requests(service, st.TIMEOUT) == []


def test_a_timeout_upstream_accepts_beyond_a_day_is_used(service, put_node):
    uuid = put_node(st.WAITING)
    service.store.transaction(_age, uuid)
    service.conf.set_override('timeout', 100000)
    periodic.time_out(service, _fence(service, 'timeout'))
    assert [r.node_uuid for r in _open_requests(service, st.TIMEOUT)] == [
        uuid]


def test_an_ironic_outage_skips_a_periodic_run_with_one_warning_line(
        service, caplog):
    # NOTE: the unit tests' Ironic answers discovery only; every other
    # call gets a 503, retried (retry_count 0) then BackendUnavailable.
    task = leadership.LeaderTask(service, 'ironic_sync', 60,
                                 periodic.IronicSync())
    task.epoch = service.store.transaction(leaders.elect, 'ironic_sync',
                                           service.member_id)
    caplog.set_level('WARNING')
    assert task._run_once() is True
    lines = [r for r in caplog.records if r.levelname != 'DEBUG']
    assert [r.getMessage().split(':')[0] for r in lines] == [
        'Periodic task ironic_sync skipped']
    assert 'ironic unavailable at http://127.0.0.1:' in lines[0].getMessage()
    assert 'Traceback' not in caplog.text
