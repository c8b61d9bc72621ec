"""Group membership on the embedded (file://) coordination backend."""

from inspector_ha.coordination import membership


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


def test_a_member_that_joins_again_is_told_once(service):
    told = []
    member = service.membership
    member._on_rejoin = lambda: told.append('rejoined')
    member._watch_once()
    assert told == []
    service.coordinator.leave_group(membership.GROUP, 5)
    member._watch_once()
    member._watch_once()
    assert told == ['rejoined']


def test_an_api_process_probes_once_a_lease_and_a_worker_every_period(
        service):
    coordination = service.conf.coordination
    assert coordination.lease_timeout > coordination.watch_period
    assert service.membership.period == coordination.lease_timeout
    for roles, leads in ((['worker'], False), (['api'], True)):
        member = membership.Membership(
            coordinator=service.coordinator, lifecycle=service.lifecycle,
            opts=coordination, host='host-a', roles=roles,
            on_shrink=lambda: None, leads=leads)
        assert member.period == coordination.watch_period
