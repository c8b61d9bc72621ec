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
def coordinator(request):
    if request.param == 'redis':
        url = request.getfixturevalue('redis_url')
    else:
        url = request.getfixturevalue('zookeeper').url
    policy = retry.RetryPolicy('coordination', 3, 0.5, threading.Event(),
                               tooz_backend.RETRYABLE)
    the_coordinator = tooz_backend.Coordinator(
        url, 'member-' + uuidlib.uuid4().hex, policy, 5)
    the_coordinator.start()
    yield the_coordinator
    the_coordinator.stop()


def test_a_dropped_member_shows_its_new_counters_once_it_joins_again(
        coordinator):
    shown = {}
    life = lifecycle.Lifecycle()
    member = membership.Membership(
        coordinator, life,
        types.SimpleNamespace(watch_period=0.5, lease_timeout=5),
        'host-a', ['worker'], on_shrink=lambda: None,
        shown=lambda: dict(shown))
    member.enter()
    coordinator.leave_group(membership.GROUP, 5)
    shown['fenced_writes'] = {'timeout': 1}
    member._publish_counters()
    member._watch_once()
    caps = membership.members(coordinator)[coordinator.member_id]
    assert caps['fenced_writes'] == {'timeout': 1}
    assert life.failure is None
