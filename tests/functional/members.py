"""Coordinators and group members for the membership tests, on any
tooz backend URL (``file://`` in the unit tests, Redis and ZooKeeper in
the functional ones)."""

import threading
import types
import uuid as uuidlib

from inspector_ha.common import lifecycle
from inspector_ha.common import retry
from inspector_ha.coordination import membership
from inspector_ha.coordination import tooz_backend


def coordinator_at(url):
    """A started coordinator of a new member at ``url``."""
    policy = retry.RetryPolicy('coordination', 3, 0.5, threading.Event(),
                               tooz_backend.RETRYABLE)
    coordinator = tooz_backend.Coordinator(
        url, 'member-' + uuidlib.uuid4().hex, policy, 5)
    coordinator.start()
    return coordinator


def member(coordinator, roles=('worker',), shown=dict, on_workers=None,
           life=None, on_shrink=lambda: None, lease_timeout=5):
    """A member of the group (not entered yet), watching every 0.5 s."""
    return membership.Membership(
        coordinator=coordinator, lifecycle=life or lifecycle.Lifecycle(),
        opts=types.SimpleNamespace(watch_period=0.5,
                                   lease_timeout=lease_timeout),
        host='host-a', roles=list(roles), on_shrink=on_shrink, shown=shown,
        on_workers=on_workers)
