"""root_disk_selection with Ironic's root-device hints (the functional
test runs it against a real Ironic)."""

import pytest

from inspector_ha.processing import base
from inspector_ha.processing import hints
from inspector_ha.processing.hooks import root_disk

import hooktools

GiB = 1024 ** 3
DISKS = [
    {'name': '/dev/sda', 'size': 10 * GiB, 'model': 'Small Disk',
     'vendor': 'ACME', 'serial': 'S1', 'rotational': True, 'wwn': None,
     'hctl': '1:0:0:0', 'by_path': '/dev/disk/by-path/pci-0000:00:01'},
    {'name': '/dev/sdb', 'size': 100 * GiB, 'model': 'Big Disk',
     'vendor': 'ACME', 'serial': 'S2', 'rotational': False,
     'wwn': '0x5000', 'hctl': '2:0:0:0'},
    {'name': '/dev/nvme0n1', 'size': 500 * GiB, 'model': 'Fast One',
     'vendor': 'Other', 'serial': 'S3', 'rotational': 'false'},
]


@pytest.fixture
def hook():
    return root_disk.RootDiskSelectionHook(hooktools.new_conf())


def _run(hook, root_device=None, skip=None, root=None):
    properties = {}
    if root_device is not None:
        properties['root_device'] = root_device
    if skip is not None:
        properties['skip_block_devices'] = skip
    data = {'inventory': {'disks': [dict(d) for d in DISKS]}}
    if root is not None:
        data['root_disk'] = root
    ironic = hooktools.run(hook, data, properties=properties)
    return data, hooktools.patched(ironic)


@pytest.mark.parametrize('root_device,expected', [
    ({'name': '/dev/sdb'}, '/dev/sdb'),
    ({'serial': 's3'}, '/dev/nvme0n1'),
    ({'model': 'big disk'}, '/dev/sdb'),
    ({'model': '<in> Fast'}, '/dev/nvme0n1'),
    ({'size': 100}, '/dev/sdb'),
    ({'size': '>= 200'}, '/dev/nvme0n1'),
    ({'size': '<or> 10 <or> 500', 'vendor': 'other'}, '/dev/nvme0n1'),
    ({'rotational': False}, '/dev/sdb'),
    ({'rotational': 'true', 'vendor': 's== ACME'}, '/dev/sda'),
    ({'wwn': '0x5000'}, '/dev/sdb'),
    ({'hctl': '1:0:0:0'}, '/dev/sda'),
    ({'name': 's!= /dev/sda', 'vendor': 'acme'}, '/dev/sdb'),
    ('{"serial": "S2"}', '/dev/sdb'),
])
def test_root_device_hints_pick_the_first_matching_disk(hook, root_device,
                                                        expected):
    data, patched = _run(hook, root_device, root=DISKS[0])
    assert data['root_disk']['name'] == expected
    size = next(d['size'] for d in DISKS if d['name'] == expected)
    assert patched == {'/properties/local_gb': str(size // GiB - 1)}


def test_skip_block_devices_removes_disks_before_the_hints(hook):
    data, _ = _run(hook, {'vendor': 'acme'}, skip=[{'name': '/dev/sda'}])
    assert data['root_disk']['name'] == '/dev/sdb'


def test_hints_matching_no_disk_fail_with_upstreams_message(hook):
    with pytest.raises(base.HookError,
                       match='^No disks satisfied root device hints$'):
        _run(hook, {'serial': 'nope'})


def test_hints_matching_only_skipped_disks_fail(hook):
    with pytest.raises(base.HookError, match='No disks satisfied'):
        _run(hook, {'name': '/dev/sda'}, skip=[{'vendor': 'acme'}])


@pytest.mark.parametrize('root_device,reason', [
    ('{"name": ', 'not valid JSON'),
    ('[1]', 'must be an object'),
    ({'colour': 'red'}, 'The hints "colour" are invalid'),
    ({'size': '<bigger> 10'}, 'unknown operator "<bigger>"'),
    ({'model': '=> x'}, 'unknown operator "=>"'),
    ({'size': 'ten'}, 'not an integer'),
    ({'size': -1}, 'positive integer'),
    ({'rotational': 'maybe'}, 'not a Boolean'),
    ({'model': 7}, 'not a string'),
])
def test_invalid_hints_fail_the_introspection_with_the_reason(
        hook, root_device, reason):
    with pytest.raises(base.HookError) as info:
        _run(hook, root_device)
    assert str(info.value).startswith(
        'No disks could be found using the root device hints ')
    assert reason in str(info.value)


def test_an_invalid_skip_hint_fails_too(hook):
    with pytest.raises(base.HookError, match='The hints "bogus"'):
        _run(hook, {'name': '/dev/sda'}, skip=[{'bogus': 1}])


def test_without_hints_the_ramdisks_root_disk_is_used(hook):
    data, patched = _run(hook, root=DISKS[1])
    assert data['local_gb'] == 99
    assert patched == {'/properties/local_gb': '99'}


def test_no_root_disk_reported_means_a_diskless_node(hook):
    data, patched = _run(hook)
    assert data['local_gb'] == 0
    assert patched == {'/properties/local_gb': '0'}


def test_a_disk_value_with_spaces_matches_its_quoted_hint():
    parsed = hints.parse({'model': '<or> small disk <or> other'})
    assert [d['name'] for d in hints.find(DISKS, parsed)] == ['/dev/sda']
