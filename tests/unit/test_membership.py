"""Group membership on the embedded (file://) coordination backend."""

from urllib import parse

import futurist

from inspector_ha.coordination import membership
from inspector_ha.coordination import tooz_backend


def _members(service):
    return membership.members(service.coordinator)


def test_a_member_dropped_from_the_group_joins_again_at_its_next_probe(
        service):
    assert service.member_id in _members(service)
    service.coordinator.leave_group(membership.GROUP, 5)
    assert service.member_id not in _members(service)
    service.membership._probe()
    caps = _members(service)[service.member_id]
    assert caps['roles'] == ['api']


def test_tooz_runs_the_group_calls_on_the_calling_thread(service):
    """No executor thread of tooz's between a caller and the backend
    (``executor=sync`` added to the URL, unless it sets an executor)."""
    executor = service.coordinator._coord._executor.executor
    assert isinstance(executor, futurist.SynchronousExecutor)
    assert 'executor=sync' in service.coordinator.url


def test_an_executor_the_backend_url_names_is_kept():
    url = tooz_backend.with_options(
        'redis://127.0.0.1:6379?executor=threaded', 2)
    assert parse.parse_qs(parse.urlsplit(url).query) == {
        'executor': ['threaded'], 'timeout': ['2']}
