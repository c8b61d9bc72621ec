"""The raid_device hook: the root device learnt across two runs."""

import pytest

from inspector_ha.processing.hooks import raid_device

import hooktools


@pytest.fixture
def hook():
    return raid_device.RaidDeviceHook(hooktools.new_conf())


def _data(*serials):
    return {'inventory': {'disks': [
        {'name': '/dev/sd%s' % chr(97 + i), 'serial': s}
        for i, s in enumerate(serials)] + [{'name': '/dev/sr0'}]}}


def _node_patch(ironic):
    [call] = ironic.written('patch_node')
    return call[1]


def test_the_first_run_stores_the_serials_in_extra(hook):
    ironic = hooktools.run(hook, _data('S1', 'S2'))
    assert _node_patch(ironic) == [
        {'op': 'add', 'path': '/extra/block_devices',
         'value': {'serials': ['S1', 'S2']}}]


def test_a_second_run_with_one_new_disk_sets_it_as_root_device(hook):
    ironic = hooktools.run(hook, _data('S1', 'RAID1', 'S2'),
                           extra={'block_devices': {'serials': ['S1',
                                                                'S2']}})
    assert _node_patch(ironic) == [
        {'op': 'remove', 'path': '/extra/block_devices'},
        {'op': 'add', 'path': '/properties/root_device',
         'value': {'serial': 'RAID1'}}]


@pytest.mark.parametrize('serials', [('S1', 'S2'), ('S1', 'N1', 'N2')])
def test_no_or_several_new_disks_change_nothing(hook, serials):
    ironic = hooktools.run(hook, _data(*serials),
                           extra={'block_devices': {'serials': ['S1',
                                                                'S2']}})
    assert ironic.calls == []


def test_a_known_root_device_or_no_disk_changes_nothing(hook):
    assert hooktools.run(hook, _data('S1'), properties={
        'root_device': {'serial': 'S0'}}).calls == []
    assert hooktools.run(hook, _data()).calls == []


def test_legacy_block_devices_are_read_when_there_is_no_inventory(hook):
    ironic = hooktools.run(hook, {'block_devices': {'serials': ['L1']}})
    assert _node_patch(ironic)[0]['value'] == {'serials': ['L1']}


@pytest.mark.parametrize('data,expected', [({}, 1), ({'local_gb': 0}, 1),
                                           ({'local_gb': 40}, 40)])
def test_a_missing_local_gb_is_faked_before_processing(hook, data,
                                                       expected):
    hook.before_processing(data)
    assert data['local_gb'] == expected
