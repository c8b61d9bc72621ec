"""Group membership on the backends that show capabilities (Redis,
ZooKeeper): a member dropped from the group while it had something new
to show (a paused leader's fenced writes) keeps running, joins again and
shows it (doc/guarantees.md E3, E9). And on those and ``file://``, the
count of live workers that [worker] cluster_concurrency divides by.
Every member's probe tells who left. And a Redis gone between two group
calls fails each with an error the coordination retry policy counts."""

import types
import uuid as uuidlib

import pytest

from inspector_ha.common import lifecycle
from inspector_ha.coordination import membership
from inspector_ha.coordination import tooz_backend

import members as members_mod
import private


def _backend_url(request, backend):
    """A URL whose groups no other test sees (ZooKeeper: a namespace of
    the test's own on the session's server)."""
    if backend == 'file':
        return 'file://%s' % request.getfixturevalue('tmp_path')
    if backend == 'redis':
        return request.getfixturevalue('redis_url')
    return '%s?namespace=test-%s' % (
        request.getfixturevalue('zookeeper').url, uuidlib.uuid4().hex)


@pytest.fixture(params=['redis', 'zookeeper'])
def backend_url(request):
    return _backend_url(request, request.param)


@pytest.fixture(params=['file', 'redis', 'zookeeper'])
def any_backend_url(request):
    return _backend_url(request, request.param)


@pytest.fixture
def coordinator(backend_url):
    the_coordinator = members_mod.coordinator_at(backend_url)
    yield the_coordinator
    the_coordinator.stop()


def test_a_dropped_member_shows_its_new_counters_once_it_joins_again(
        coordinator):
    """And it does not take itself for a member that left."""
    shown, shrinks = {}, []
    life = lifecycle.Lifecycle()
    member = members_mod.member(coordinator, shown=lambda: dict(shown),
                                life=life, on_shrink=lambda: shrinks.append(1))
    member.enter()
    coordinator.leave_group(membership.GROUP, 5)
    shown['fenced_writes'] = {'timeout': 1}
    member._publish_counters()
    member._watch_once()
    caps = membership.members(coordinator)[coordinator.member_id]
    assert caps['fenced_writes'] == {'timeout': 1}
    assert life.failure is None
    assert shrinks == []


def test_each_worker_learns_how_many_workers_live_for_its_share(
        any_backend_url):
    """[worker] cluster_concurrency's count (doc/guarantees.md I1): the
    worker processes, not the API ones; one that leaves is not counted
    at the next watch."""
    counts = {}
    coordinators = [members_mod.coordinator_at(any_backend_url)
                    for _ in range(4)]
    try:
        members = [members_mod.member(
            c, on_workers=lambda n, i=i: counts.__setitem__(i, n))
            for i, c in enumerate(coordinators[:3])]
        members.append(members_mod.member(coordinators[3], roles=('api',)))
        for member in members:
            member.enter()
        for member in members:
            member._watch_once()
        assert counts == {0: 3, 1: 3, 2: 3}
        members[2].leave()
        members[0]._watch_once()
        assert counts[0] == 2
    finally:
        for the_coordinator in coordinators:
            the_coordinator.stop()


def test_a_worker_counts_the_workers_when_the_group_changes_and_seldom_else(
        any_backend_url, monkeypatch):
    """As it enters; at each probe for a lease after the member group
    changed (a worker that left, one that joined: it joins the workers'
    group first); every WORKERS_RECOUNT_PERIOD besides; and after it was
    dropped and joined again. A clock of the test's own."""
    clock = [1000.0]
    monkeypatch.setattr(membership, 'time',
                        types.SimpleNamespace(monotonic=lambda: clock[0]))
    counts = []
    coordinators = [members_mod.coordinator_at(any_backend_url)
                    for _ in range(2)]
    try:
        watching = members_mod.member(coordinators[0], lease_timeout=2,
                                      on_workers=counts.append)
        watching.enter()
        for _ in range(3):
            clock[0] += 0.5
            watching._watch_once()
        assert counts == [1]
        members_mod.member(coordinators[1]).enter()
        watching._watch_once()
        clock[0] += 1.5
        watching._watch_once()
        assert counts == [1, 2, 2]
        clock[0] += 1.0
        watching._watch_once()
        assert counts == [1, 2, 2]
        clock[0] += 4.0
        watching._watch_once()
        assert counts == [1, 2, 2, 2]
        coordinators[0].leave_group(membership.WORKERS, 5)
        coordinators[0].leave_group(membership.GROUP, 5)
        watching._watch_once()
        assert counts == [1, 2, 2, 2, 2]
        assert coordinators[0].member_id.encode() in \
            coordinators[1].member_ids(membership.WORKERS, 5)
    finally:
        for the_coordinator in coordinators:
            the_coordinator.stop()


def test_a_member_that_leaves_resets_the_others_leaderships_at_their_probe(
        any_backend_url):
    """Once per probe that finds members gone, not when one joins."""
    shrinks = []
    coordinators = [members_mod.coordinator_at(any_backend_url)
                    for _ in range(3)]
    try:
        watching = members_mod.member(
            coordinators[0], on_shrink=lambda: shrinks.append(1))
        others = [members_mod.member(c) for c in coordinators[1:]]
        watching.enter()
        for member in others:
            member.enter()
        watching._watch_once()
        assert shrinks == []
        for member in others:
            member.leave()
        watching._watch_once()
        watching._watch_once()
        assert shrinks == [1]
    finally:
        for the_coordinator in coordinators:
            the_coordinator.stop()


@pytest.mark.parametrize('private_server', [private.Redis], indirect=True)
def test_a_redis_gone_fails_each_group_call_as_the_retry_policy_counts(
        private_server):
    """tooz 9's redis driver hands its group calls' results back with
    redis's own errors, which no retry policy counted: a watch whose probe
    passed just before Redis went (and whose tooz watchers then listed the
    group again) stopped a worker without naming coordination (CI of stop
    35). Each call takes redis-py's own retries (3-4 s)."""
    the_coordinator = members_mod.coordinator_at(private_server.url)
    try:
        members_mod.member(the_coordinator).enter()
        private_server.stop()
        calls = {
            'member_ids': lambda: the_coordinator.member_ids(
                membership.GROUP, 5),
            'update_capabilities': lambda: the_coordinator.
            update_capabilities(membership.GROUP, b'{}'),
            'join_group': lambda: the_coordinator.join_group(
                membership.GROUP, b'{}'),
            'leave_group': lambda: the_coordinator.leave_group(
                membership.WORKERS, 5),
            'members': lambda: the_coordinator.members(membership.GROUP)}
        raised = {name: _raised(call) for name, call in calls.items()}
        assert all(isinstance(exc, tooz_backend.RETRYABLE)
                   for exc in raised.values()), raised
    finally:
        private_server.start()
        the_coordinator.stop()


def _raised(call):
    try:
        call()
    except Exception as exc:
        return exc
    return None
