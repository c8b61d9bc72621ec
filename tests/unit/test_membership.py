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
