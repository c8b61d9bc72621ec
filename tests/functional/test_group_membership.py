"""Group membership on the backends that show capabilities (Redis,
ZooKeeper): a member dropped from the group while it had something new
to show (a paused leader's fenced writes) keeps running, joins again and
shows it (doc/guarantees.md E3, E9). And on those and ``file://``, the
count of live workers that [worker] cluster_concurrency divides by."""

import pytest

from inspector_ha.common import lifecycle
from inspector_ha.coordination import membership

import members as members_mod


def _backend_url(request, backend):
    if backend == 'file':
        return 'file://%s' % request.getfixturevalue('tmp_path')
    if backend == 'redis':
        return request.getfixturevalue('redis_url')
    return request.getfixturevalue('zookeeper').url


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
    shown = {}
    life = lifecycle.Lifecycle()
    member = members_mod.member(coordinator, shown=lambda: dict(shown),
                                life=life)
    member.enter()
    coordinator.leave_group(membership.GROUP, 5)
    shown['fenced_writes'] = {'timeout': 1}
    member._publish_counters()
    member._watch_once()
    caps = membership.members(coordinator)[coordinator.member_id]
    assert caps['fenced_writes'] == {'timeout': 1}
    assert life.failure is None


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
