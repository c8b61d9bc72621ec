"""Periodic work: timeouts and the outbox re-drive, driven directly."""

import datetime
import functools
import time

import pytest
import sqlalchemy as sa

from inspector_ha.coordination import election
from inspector_ha.db import leaders
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.engine import leadership
from inspector_ha.engine import periodic
from inspector_ha.fsm import states as st
from inspector_ha.messaging import objects


def _age(session, uuid):
    session.execute(sa.update(models.Node).where(models.Node.uuid == uuid)
                    .values(started_at=datetime.datetime(2000, 1, 1)))


def _fence(service, task):
    epoch = service.store.transaction(leaders.elect, task, 'unit-test')
    return lambda session: leaders.fence(session, task, epoch)


def _time_out(service):
    periodic.time_out(service.store, service.publisher,
                      service.conf.timeout, _fence(service, 'timeout'))


def _leader(service, name, job, period=60):
    """A leader of ``name`` running ``job``, elected (epoch in SQL)."""
    election = service.election(name)
    election.epoch = service.store.transaction(leaders.elect, name,
                                               service.member_id)
    return leadership.LeaderLoop(election=election, period=period, job=job,
                                 lifecycle=service.lifecycle,
                                 campaign=service.campaign())


def _open_requests(service, event):
    def query(session):
        return [r for r in session.execute(sa.select(models.Request.__table__))
                if r.event == event]
    return service.store.transaction(query)


def test_an_introspection_past_its_timeout_gets_one_timeout_request(
        service, put_node):
    old = put_node(st.WAITING)
    put_node(st.WAITING)
    service.store.transaction(_age, old)
    _time_out(service)
    _time_out(service)
    timeouts = _open_requests(service, st.TIMEOUT)
    assert [r.node_uuid for r in timeouts] == [old]


def test_a_timeout_request_ends_the_introspection_in_error(service,
                                                           put_node):
    uuid = put_node(st.WAITING)
    service.store.transaction(_age, uuid)
    _time_out(service)
    request = _open_requests(service, st.TIMEOUT)[0]
    message = objects.TransitionRequest(request_id=request.id,
                                        node_uuid=uuid, event=st.TIMEOUT)
    assert service.worker().handle(message)
    node = service.store.transaction(nodes.get, uuid)
    assert (node.state, node.error) == (st.ERROR, 'Introspection timeout')


def test_finished_introspections_never_time_out(service, put_node):
    uuid = put_node(st.FINISHED)
    service.store.transaction(_age, uuid)
    _time_out(service)
    assert _open_requests(service, st.TIMEOUT) == []


def test_the_redrive_touches_stale_open_requests_so_they_wait_again(
        service, put_node):
    uuid = put_node(st.WAITING)
    request = service.store.transaction(ledger.add, uuid, st.ABORT, 1)
    service.conf.set_override('redrive_after', 1.0, group='worker')
    service.store.transaction(lambda s: s.execute(
        sa.update(models.Request).values(
            updated_at=datetime.datetime(2000, 1, 1))))
    periodic.redrive(service.store, service.publisher, 1.0,
                     _fence(service, 'redrive'))
    assert service.store.transaction(ledger.stale, 1.0) == []
    assert service.store.transaction(ledger.get, request.id).status == \
        ledger.PENDING


def test_a_deposed_leader_counts_its_refused_write_and_publishes_it(
        service):
    task = _leader(service, 'timeout', functools.partial(
        periodic.time_out, service.store, service.publisher, 1))
    service.store.transaction(leaders.elect, 'timeout', 'new')
    assert task._run_once() is False
    assert task.fenced_writes == 1
    service.leader_loops = [task]
    try:
        # NOTE: the file driver cannot update capabilities; Redis and
        # ZooKeeper show the count (tests/functional/test_leadership.py).
        service.membership._publish_counters()
    finally:
        service.leader_loops = []
    assert service.membership.capabilities['fenced_writes'] == {
        'timeout': 1}


def test_a_leader_starts_a_run_every_period_however_long_the_last_took(
        service):
    starts = []

    def job(_fence):
        starts.append(time.monotonic())
        if len(starts) == 3:
            task.reset.set()
        time.sleep(0.4)

    task = _leader(service, 'blacklist_list', job, period=0.5)
    task._lead(task.epoch)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    # NOTE: at a fixed rate 0.5 s apart; a wait after each run would
    # make it 0.9 s.
    assert len(gaps) == 2 and max(gaps) < 0.8, gaps


class _Listing:
    """Stands in for Ironic's node listing (what it returned, in order)."""

    def __init__(self, *listings):
        self._listings = list(listings)

    def node_uuids(self):
        return self._listings.pop(0)


def test_a_node_started_during_an_ironic_listing_is_not_deleted(
        service, put_node):
    node = put_node(st.WAITING)
    # NOTE: the first listing began before the node was started.
    sync = periodic.IronicSync(service.store, service.publisher,
                               _Listing(set(), {node}, {node}))
    fence = _fence(service, 'ironic_sync')
    sync(fence)
    sync(fence)
    sync(fence)
    assert _open_requests(service, st.DELETE) == []


def test_a_node_missing_from_two_listings_in_a_row_gets_one_delete(
        service, put_node):
    node = put_node(st.WAITING)
    sync = periodic.IronicSync(service.store, service.publisher,
                               _Listing(set(), set(), set()))
    fence = _fence(service, 'ironic_sync')
    sync(fence)
    assert _open_requests(service, st.DELETE) == []
    sync(fence)
    sync(fence)
    assert [r.node_uuid for r in _open_requests(
        service, st.DELETE)] == [node]


def test_a_timeout_of_zero_or_less_disables_timeouts_as_upstream(
        service, put_node):
    uuid = put_node(st.WAITING)
    service.store.transaction(_age, uuid)
    for value in (0, -1):
        service.conf.set_override('timeout', value)
        _time_out(service)
    assert _open_requests(service, st.TIMEOUT) == []


def test_a_timeout_upstream_accepts_beyond_a_day_is_used(service, put_node):
    uuid = put_node(st.WAITING)
    service.store.transaction(_age, uuid)
    service.conf.set_override('timeout', 100000)
    _time_out(service)
    assert [r.node_uuid for r in _open_requests(service, st.TIMEOUT)] == [
        uuid]


def test_an_ironic_outage_skips_a_periodic_run_with_one_warning_line(
        service, caplog):
    # NOTE: the unit tests' Ironic answers discovery only; every other
    # call gets a 503, retried (retry_count 0) then BackendUnavailable.
    task = _leader(service, 'ironic_sync', periodic.IronicSync(
        service.store, service.publisher, service.ironic))
    caplog.set_level('WARNING')
    assert task._run_once() is True
    lines = [r for r in caplog.records if r.levelname != 'DEBUG']
    assert [r.getMessage().split(':')[0] for r in lines] == [
        'Periodic job ironic_sync skipped']
    assert 'ironic unavailable at http://127.0.0.1:' in lines[0].getMessage()
    assert 'Traceback' not in caplog.text


class _Published(list):
    """A publisher that keeps what it is given."""

    def publish(self, request_id, node_uuid, event):
        self.append((request_id, node_uuid, event))


def _held(service, uuid, event, holder, status=ledger.PENDING):
    return service.store.transaction(ledger.add, uuid, event, 1,
                                     status=status, held_by=holder)


def _take_over(service, published, members, me, period=0.05, longest=0.2,
               workers=()):
    """A take-over job seeing ``members`` and ``workers`` (lists a test
    may change between runs)."""
    return periodic.TakeOver(store=service.store, publisher=published,
                             members=lambda: members,
                             workers=lambda: workers, me=me, period=period,
                             longest=longest)


def _lapsed_worker(service, published, **kwargs):
    """A take-over that saw worker ``worker-1.10`` live, which has now
    lapsed (gone from both groups)."""
    members = ['worker-1.10', 'worker-2.20', 'api-1.30']
    workers = ['worker-1.10', 'worker-2.20']
    take_over = _take_over(service, published, members, 'api-1.30',
                           workers=workers, **kwargs)
    take_over(_fence(service, 'take_over'))
    members.remove('worker-1.10')
    workers.remove('worker-1.10')
    return take_over


def test_requests_held_by_a_member_whose_lease_lapsed_are_published_again(
        service, put_node):
    uuids = [put_node(st.WAITING) for _ in range(3)]
    gone = _held(service, uuids[0], st.PROCESS, 'worker-1.10')
    _held(service, uuids[1], st.PROCESS, 'worker-2.20')
    _held(service, uuids[2], st.ABORT, 'worker-1.10', status=ledger.DONE)
    published = _Published()
    take_over = _lapsed_worker(service, published, period=60, longest=60)
    assert published == []
    take_over(_fence(service, 'take_over'))
    assert published == [(gone.id, uuids[0], st.PROCESS)]
    # Still held by the lapsed worker (until a live member counts it),
    # and not published again before its next turn.
    assert service.store.transaction(ledger.get, gone.id).held_by == \
        'worker-1.10'
    take_over(_fence(service, 'take_over'))
    assert len(published) == 1


def test_an_api_processs_requests_are_published_once_and_let_go_of(
        service, put_node):
    """An API has no prefetch window a copy could fall into: its
    requests are published once, then left to the outbox's re-drive."""
    uuid = put_node(st.WAITING)
    gone = _held(service, uuid, st.PROCESS, 'api-9.90')
    published = _Published()
    take_over = _take_over(service, published, ['worker-2.20', 'api-1.30'],
                           'api-1.30', workers=['worker-2.20'])
    take_over(_fence(service, 'take_over'))
    assert published == [(gone.id, uuid, st.PROCESS)]
    assert service.store.transaction(ledger.get, gone.id).held_by is None
    time.sleep(0.1)
    take_over(_fence(service, 'take_over'))
    assert len(published) == 1


def test_a_taken_over_request_is_published_again_until_a_live_member_counts_it(
        service, put_node):
    """A copy may reach the frozen worker itself (its prefetch window has
    room): the take-over publishes again, after 1, 2, 4... periods."""
    uuid = put_node(st.WAITING)
    gone = _held(service, uuid, st.PROCESS, 'worker-1.10')
    published = _Published()
    take_over = _lapsed_worker(service, published, period=0.05,
                               longest=0.1)
    fence = _fence(service, 'take_over')
    times = []
    deadline = time.monotonic() + 5
    while len(published) < 4 and time.monotonic() < deadline:
        before = len(published)
        take_over(fence)
        if len(published) > before:
            times.append(time.monotonic())
        time.sleep(0.01)
    assert len(published) == 4
    gaps = [b - a for a, b in zip(times, times[1:])]
    # NOTE: lower bounds only: a loaded machine may run a turn late.
    assert gaps[0] >= 0.05 and min(gaps[1:]) >= 0.1, gaps
    service.store.transaction(ledger.count_delivery, gone.id, 'worker-2.20')
    time.sleep(0.15)
    take_over(fence)
    assert len(published) == 4


def test_a_delivered_request_waiting_for_a_slot_is_held_by_its_worker(
        service, put_node):
    request = _held(service, put_node(st.WAITING), st.PROCESS, 'api-1.30')
    service.worker().hold(objects.transition_request(
        request.id, request.node_uuid, request.event))
    assert service.store.transaction(ledger.get, request.id).held_by == \
        service.member_id
    done = _held(service, put_node(st.WAITING), st.ABORT, 'api-1.30',
                 status=ledger.DONE)
    service.worker().hold(objects.transition_request(
        done.id, done.node_uuid, done.event))
    assert service.store.transaction(ledger.get, done.id).held_by == \
        'api-1.30'


def test_a_member_listing_without_this_member_takes_nothing_over(
        service, put_node):
    _held(service, put_node(st.WAITING), st.PROCESS, 'worker-1.10')
    published = _Published()
    _take_over(service, published, [], 'api-1.30')(
        _fence(service, 'take_over'))
    assert published == []


def test_a_deposed_take_over_leader_publishes_nothing(service, put_node):
    _held(service, put_node(st.WAITING), st.PROCESS, 'worker-1.10')
    fence = _fence(service, 'take_over')
    service.store.transaction(leaders.elect, 'take_over', 'another')
    published = _Published()
    with pytest.raises(election.Fenced):
        _take_over(service, published, ['me'], 'me')(fence)
    assert published == []
