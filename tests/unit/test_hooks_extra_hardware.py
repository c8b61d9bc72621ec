"""The extra_hardware hook: eDeploy records into nested ``extra``."""

import pytest

from inspector_ha.processing.hooks import extra_hardware

import hooktools

RECORDS = [['cpu', 'logical', 'number', '16'],
           ['cpu', 'physical_0', 'vendor', 'GenuineIntel'],
           ['disk', 'sda', 'size', '1000'],
           ['disk', 'sda', 'rotational', 1]]


@pytest.fixture
def conf():
    return hooktools.new_conf()


def _run(conf, data):
    return hooktools.run(extra_hardware.ExtraHardwareHook(conf), data)


def test_records_become_nested_extra_with_integers_and_data_goes(conf):
    data = {'data': [list(r) for r in RECORDS]}
    ironic = _run(conf, data)
    assert data == {'extra': {
        'cpu': {'logical': {'number': 16},
                'physical_0': {'vendor': 'GenuineIntel'}},
        'disk': {'sda': {'size': 1000, 'rotational': 1}}}}
    assert ironic.calls == []


def test_no_data_changes_nothing(conf):
    data = {'inventory': {}}
    _run(conf, data)
    assert data == {'inventory': {}}


def test_short_records_are_skipped_unless_strict(conf):
    data = {'data': [['cpu', 'logical'], ['a', 'b', 'c', 'd', 'ignored']]}
    _run(conf, data)
    assert data == {'extra': {'a': {'b': {'c': 'd'}}}}


def test_strict_mode_refuses_short_records_and_drops_the_data(conf):
    conf.set_override('strict', True, group='extra_hardware')
    data = {'data': [['cpu', 'logical']] + RECORDS}
    _run(conf, data)
    assert data == {}


@pytest.mark.parametrize('strict', [True, False])
def test_data_in_another_format_is_kept_unless_strict(conf, strict):
    conf.set_override('strict', strict, group='extra_hardware')
    data = {'data': {'not': 'a list'}}
    _run(conf, data)
    assert data == ({} if strict else {'data': {'not': 'a list'}})


def test_records_with_unusable_keys_are_skipped(conf):
    data = {'data': [[['a'], 'b', 'c', 'd'], ['x', 'y', 'z', '1']]}
    _run(conf, data)
    assert data == {'extra': {'x': {'y': {'z': 1}}}}
