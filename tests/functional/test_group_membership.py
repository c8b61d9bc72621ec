"""Group membership on the backends that show capabilities (Redis,
ZooKeeper): a member dropped from the group while it had something new
to show (a paused leader's fenced writes) keeps running, joins again and
shows it (doc/guarantees.md E3, E9)."""

import threading
import types
import uuid as uuidlib

import pytest

from inspector_ha.common import lifecycle
from inspector_ha.common import retry
from inspector_ha.coordination import membership
from inspector_ha.coordination import tooz_backend


@pytest.fixture(params=['redis', 'zookeeper'])
def backend_url(request):
    if request.param == 'redis':
        return request.getfixturevalue('redis_url')
    return request.getfixturevalue('zookeeper').url


def _coordinator(url):
    policy = retry.RetryPolicy('coordination', 3, 0.5, threading.Event(),
                               tooz_backend.RETRYABLE)
    the_coordinator = tooz_backend.Coordinator(
        url, 'member-' + uuidlib.uuid4().hex, policy, 5)
    the_coordinator.start()
    return the_coordinator


@pytest.fixture
def coordinator(backend_url):
    the_coordinator = _coordinator(backend_url)
    yield the_coordinator
    the_coordinator.stop()


def _member(coordinator, roles=('worker',), shown=dict, on_workers=None,
            life=None):
    return membership.Membership(
        coordinator, life or lifecycle.Lifecycle(),
        types.SimpleNamespace(watch_period=0.5, lease_timeout=5),
        'host-a', list(roles), on_shrink=lambda: None, shown=shown,
        on_workers=on_workers)


def test_a_dropped_member_shows_its_new_counters_once_it_joins_again(
        coordinator):
    shown = {}
    life = lifecycle.Lifecycle()
    member = _member(coordinator, shown=lambda: dict(shown), life=life)
    member.enter()
    coordinator.leave_group(membership.GROUP, 5)
    shown['fenced_writes'] = {'timeout': 1}
    member._publish_counters()
    member._watch_once()
    caps = membership.members(coordinator)[coordinator.member_id]
    assert caps['fenced_writes'] == {'timeout': 1}
    assert life.failure is None


def test_each_worker_learns_how_many_workers_live_for_its_share(
        backend_url):
    """[worker] cluster_concurrency's count (doc/guarantees.md L1): the
    worker processes, not the API ones; one that leaves is not counted
    at the next watch."""
    counts = {}
    coordinators = [_coordinator(backend_url) for _ in range(4)]
    try:
        members = [_member(c, on_workers=lambda n, i=i: counts.__setitem__(
            i, n)) for i, c in enumerate(coordinators[:3])]
        members.append(_member(coordinators[3], roles=('api',)))
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
