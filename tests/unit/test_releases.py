"""The effective release: the lowest of the live members and the pin."""

import configparser
import json
import pathlib
import re
import time

from inspector_ha.coordination import membership
from inspector_ha.coordination import releases


def test_a_member_version_maps_to_the_newest_release_not_newer_than_it():
    assert releases.release_of('0.1.0') == '0.1.0'
    assert releases.release_of('0.1.7.dev3') == '0.1.0'
    assert releases.release_of('0.2.0') == '0.2.0'
    assert releases.release_of('9.0.0') == releases.CURRENT


def test_a_member_announcing_no_usable_version_counts_as_the_oldest():
    for version in (None, 'unknown', '', '0.0.1'):
        assert releases.release_of(version) == releases.OLDEST


def test_the_lowest_live_member_decides_and_a_pin_can_only_lower_it():
    assert releases.lowest(['0.2.0', '0.2.0']) == '0.2.0'
    assert releases.lowest(['0.2.0', '0.1.0', '0.2.0']) == '0.1.0'
    assert releases.lowest(['0.2.0'], pin='0.1.0') == '0.1.0'
    assert releases.lowest(['0.1.0'], pin='0.2.0') == '0.1.0'


def test_this_release_names_every_object_on_the_wire_at_its_version():
    from inspector_ha.messaging import objects
    registered = objects.InspectorObjectRegistry.obj_classes()
    newest = releases.RELEASES[releases.CURRENT]['objects']
    assert newest == {name: classes[0].VERSION
                      for name, classes in registered.items()}
    for release in releases.RELEASES.values():
        assert 'TransitionRequest' in release['objects']


def test_every_event_of_this_release_is_known_to_its_release_entry():
    from inspector_ha.fsm import states
    known = set(releases.RELEASES[releases.CURRENT]['events'])
    assert set(states.EVENTS) | {states.DELETE} <= known


def test_a_live_older_member_in_the_group_makes_the_gate_refuse_newer(
        service):
    from tooz import coordination
    gate = releases.Releases(service.coordinator, ttl=0)
    assert gate.allows(releases.CURRENT)
    old = coordination.get_coordinator(service.conf.coordination.backend_url,
                                       b'old-worker')
    old.start(start_heart=True)
    try:
        old.join_group(membership.GROUP,
                       json.dumps({'version': '0.1.0'}).encode()).get()
        assert gate.effective() == '0.1.0'
        assert not gate.allows('0.2.0')
        assert gate.allows('0.1.0')
        assert gate.object_version('TransitionRequest') == '1.0'
        old.leave_group(membership.GROUP).get()
        assert gate.allows('0.2.0')
    finally:
        old.stop()


def test_the_gate_answers_from_its_cache_until_the_ttl_passes(service):
    now = [0.0]
    gate = releases.Releases(service.coordinator, pin=None, ttl=5,
                             clock=lambda: now[0])
    assert gate.effective() == releases.CURRENT
    gate._pin = '0.1.0'
    assert gate.effective() == releases.CURRENT
    now[0] = 5.0
    assert gate.effective() == '0.1.0'


def test_a_pin_lowers_the_gate_even_when_every_member_is_new(service):
    gate = releases.Releases(service.coordinator, pin='0.1.0', ttl=0)
    assert not gate.allows('0.2.0')
    assert gate.object_version('TransitionRequest') == '1.0'


class _Gone:
    @property
    def raw(self):
        raise ConnectionError('coordination backend gone')

    def member_ids(self, group):
        raise ConnectionError('coordination backend gone')


def test_a_group_that_cannot_be_read_counts_as_the_oldest_release():
    gate = releases.Releases(_Gone(), ttl=0)
    assert gate.effective() == releases.OLDEST


class _Group:
    """A member group whose capabilities reads are counted."""

    def __init__(self, **versions):
        self.versions = {k.encode(): v for k, v in versions.items()}
        #: Roles by member id (a worker's by default).
        self.roles = {}
        self.reads = 0
        self.while_listing = lambda: None

    def member_ids(self, group):
        assert group == membership.GROUP
        self.while_listing()
        return set(self.versions)

    def capabilities(self, group, member):
        self.reads += 1
        return {'version': self.versions[member],
                'roles': self.roles.get(member, ['worker'])}


def _gate(group, now, ttl=0):
    return releases.Releases(group, ttl=ttl, clock=lambda: now[0], wait=10)


def test_a_look_reads_the_versions_again_only_when_the_members_change():
    group = _Group(api='0.2.0', worker='0.2.0')
    gate = _gate(group, [0.0])
    for _ in range(3):
        assert gate.effective() == '0.2.0'
    assert group.reads == 2
    group.versions[b'old'] = '0.1.0'
    assert gate.effective() == '0.1.0'
    assert group.reads == 5
    del group.versions[b'old']
    assert gate.effective() == '0.2.0'
    assert group.reads == 7


def test_a_member_back_under_its_id_as_another_release_is_read_in_time():
    now = [0.0]
    group = _Group(api='0.2.0', worker='0.2.0')
    gate = _gate(group, now)
    assert gate.effective() == '0.2.0'
    group.versions[b'worker'] = '0.1.0'
    now[0] = releases.REREAD_AFTER - 1
    assert gate.effective() == '0.2.0'
    now[0] = releases.REREAD_AFTER
    assert gate.effective() == '0.1.0'


def test_a_forgetting_gate_reads_every_version_at_its_next_look():
    group = _Group(api='0.2.0', worker='0.2.0')
    gate = _gate(group, [0.0], ttl=60)
    assert gate.effective() == '0.2.0'
    group.versions[b'worker'] = '0.1.0'
    assert gate.effective() == '0.2.0'
    gate.forget()
    assert gate.effective() == '0.1.0'
    assert group.reads == 4


def test_a_look_a_forget_overtook_speaks_the_oldest_release_once():
    """It took again the versions forget() dropped: the next look reads
    them."""
    now = [0.0]
    group = _Group(api='0.2.0', worker='0.2.0')
    gate = _gate(group, now, ttl=1)
    assert gate.effective() == '0.2.0'
    now[0] = 1.0
    group.while_listing = gate.forget
    assert gate.effective() == releases.OLDEST
    assert group.reads == 2
    group.while_listing = lambda: None
    assert gate.effective() == '0.2.0'
    assert group.reads == 4


def _asked_after_a_look(gate, now, ttl):
    """firewall_anywhere() once the look a question ``ttl`` later starts
    has answered."""
    now[0] += ttl
    gate.effective()
    return gate.firewall_anywhere()


def test_the_gate_tells_whether_a_live_member_may_run_a_pxe_firewall():
    now = [0.0]
    group = _Group(api='0.2.0', worker='0.2.0')
    gate = _gate(group, now, ttl=2)
    assert not _asked_after_a_look(gate, now, 2)
    group.versions[b'guard'] = '0.2.0'
    group.roles[b'guard'] = ['worker', membership.FIREWALL_ROLE]
    assert _asked_after_a_look(gate, now, 2)
    del group.versions[b'guard']
    assert not _asked_after_a_look(gate, now, 2)
    # NOTE: 0.1.0 names no firewall among its roles, and may run one.
    group.versions[b'old'] = '0.1.0'
    assert _asked_after_a_look(gate, now, 2)


def test_no_firewall_is_answered_only_within_a_ttl_of_a_listing():
    now = [0.0]
    group = _Group(api='0.2.0', worker='0.2.0')
    gate = _gate(group, now, ttl=2)
    assert gate.firewall_anywhere(), 'no look had answered'
    gate.effective()
    assert not gate.firewall_anywhere()
    now[0] = 1.9
    assert not gate.firewall_anywhere()
    # NOTE: the look this question starts has not answered: the last
    # listing is a ttl old.
    group.while_listing = lambda: time.sleep(0.2)
    now[0] = 2.0
    assert gate.firewall_anywhere()
    gate.effective()
    assert not gate.firewall_anywhere()


def test_a_gate_that_could_not_see_the_members_counts_a_firewall():
    gate = releases.Releases(_Gone(), ttl=60, wait=10)
    gate.effective()
    assert gate.firewall_anywhere()
    now = [0.0]
    group = _Group(api='0.2.0', worker='0.2.0')
    gate = _gate(group, now, ttl=2)
    assert not _asked_after_a_look(gate, now, 2)
    group.while_listing = gate.forget
    assert _asked_after_a_look(gate, now, 2)


ROOT = pathlib.Path(__file__).resolve().parents[2]


def _previous_release():
    parser = configparser.ConfigParser()
    parser.read(ROOT / 'upgrade' / 'previous-release')
    return parser['previous']['version'], parser['previous']['commit']


def test_the_package_the_previous_release_and_the_grenade_base_agree():
    setup = configparser.ConfigParser(interpolation=None)
    setup.read(ROOT / 'setup.cfg')
    assert setup['metadata']['version'] == releases.CURRENT
    known = sorted(releases.RELEASES,
                   key=lambda r: tuple(int(n) for n in r.split('.')))
    assert known[-1] == releases.CURRENT
    version, commit = _previous_release()
    assert known[-2] == version
    assert re.fullmatch('[0-9a-f]{40}', commit)
    settings = (ROOT / 'devstack' / 'upgrade' / 'settings').read_text()
    assert 'INSPECTOR_HA_BASE_REF:-%s}' % version in settings


def test_the_pin_takes_the_previous_release_and_lowers_to_it():
    version, _ = _previous_release()
    assert releases.lowest([releases.CURRENT], pin=version) == version
    assert releases.object_version_in(version, 'TransitionRequest')
