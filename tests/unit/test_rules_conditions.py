"""Rule conditions: the operators, and how fields, ``multiple`` and
``invert`` decide whether a condition holds (upstream's semantics)."""

import pytest

from inspector_ha.processing import base
from inspector_ha.rules import engine
from inspector_ha.rules import paths
from inspector_ha.rules import plugins as plugins_mod

DATA = {'memory_mb': 8192, 'cpus': '4', 'cpu_arch': 'x86_64',
        'ipmi_address': '192.0.2.10', 'empty': '', 'nothing': None,
        'interfaces': [{'ip': '10.0.0.5'}, {'ip': '192.168.1.7'}],
        'inventory': {'disks': [{'size': 10}, {'size': 500}]}}
NODE = {'properties': {'cpus': '4', 'capabilities': 'boot_mode:uefi'},
        'driver': 'ipmi', 'name': 'node-1'}


@pytest.fixture(scope='module')
def plugins():
    return plugins_mod.Plugins()


def _holds(plugins, field, op, **params):
    condition = dict({'multiple': 'any', 'invert': False}, field=field,
                     op=op, **params)
    return engine.holds(condition, {paths.DATA: DATA, paths.NODE: NODE},
                        plugins)


def test_every_upstream_operator_is_an_entry_point(plugins):
    # NOTE: without the test plugin's (tests/plugins/upstream_style).
    assert [n for n in plugins.condition_names
            if not n.startswith('upstream-')] == sorted([
        'eq', 'lt', 'gt', 'le', 'ge', 'ne', 'in-net', 'matches',
        'contains', 'is-empty'])


@pytest.mark.parametrize('op,value,expected', [
    ('eq', 8192, True), ('eq', 8191, False), ('ne', 8191, True),
    ('lt', 8193, True), ('lt', 8192, False), ('le', 8192, True),
    ('gt', 8191, True), ('gt', 8192, False), ('ge', 8192, True),
    ('ge', 8193, False)])
def test_comparisons_compare_the_field_with_the_value(plugins, op, value,
                                                     expected):
    assert _holds(plugins, 'memory_mb', op, value=value) is expected


@pytest.mark.parametrize('value,expected', [
    (4, True), (4.0, True), (3.5, False), ('4', True), ('04', False)])
def test_the_field_is_coerced_to_the_type_of_the_value(plugins, value,
                                                      expected):
    assert _holds(plugins, 'cpus', 'eq', value=value) is expected


def test_a_string_value_compares_as_a_string(plugins):
    assert _holds(plugins, 'cpu_arch', 'eq', value='x86_64')
    assert _holds(plugins, 'cpu_arch', 'lt', value='y')


@pytest.mark.parametrize('value,expected', [
    ('192.0.2.0/24', True), ('192.0.2.10/32', True), ('10.0.0.0/8', False)])
def test_in_net_checks_the_address_is_inside_the_network(plugins, value,
                                                        expected):
    assert _holds(plugins, 'ipmi_address', 'in-net', value=value) is expected


@pytest.mark.parametrize('op,value,expected', [
    ('matches', 'x86', False), ('matches', 'x86.*', True),
    ('matches', 'x86_64$', True), ('matches', '86', False),
    ('contains', '86', True), ('contains', '^86', False)])
def test_matches_is_a_full_match_and_contains_a_search(plugins, op, value,
                                                      expected):
    assert _holds(plugins, 'cpu_arch', op, value=value) is expected


def test_regular_expressions_see_non_strings_as_text(plugins):
    assert _holds(plugins, 'memory_mb', 'matches', value='81[0-9]+')


@pytest.mark.parametrize('field,expected', [
    ('empty', True), ('nothing', True), ('missing', True),
    ('cpu_arch', False), ('inventory.disks', False)])
def test_is_empty_accepts_a_missing_field(plugins, field, expected):
    assert _holds(plugins, field, 'is-empty') is expected


def test_is_empty_is_true_for_empty_lists_and_objects(plugins):
    check = plugins.condition('is-empty').check
    assert check([], {}) and check({}, {})
    assert not check(0, {}) and not check(False, {})


def test_a_missing_field_fails_an_operator_that_needs_a_value(plugins):
    assert not _holds(plugins, 'missing', 'ne', value=1)
    assert not _holds(plugins, 'missing', 'ne', value=1, invert=True)


@pytest.mark.parametrize('multiple,value,expected', [
    ('any', '10.0.0.0/8', True), ('all', '10.0.0.0/8', False),
    ('first', '10.0.0.0/8', True), ('any', '172.16.0.0/12', False),
    ('all', '0.0.0.0/0', True), ('first', '192.168.0.0/16', False)])
def test_multiple_decides_how_several_values_count(plugins, multiple, value,
                                                  expected):
    assert _holds(plugins, 'interfaces[*].ip', 'in-net', value=value,
                  multiple=multiple) is expected


def test_invert_negates_each_value_before_multiple_combines_them(plugins):
    assert _holds(plugins, 'inventory.disks[*].size', 'gt', value=100,
                  multiple='all', invert=True) is False
    assert _holds(plugins, 'inventory.disks[*].size', 'gt', value=100,
                  multiple='any', invert=True) is True
    assert _holds(plugins, 'inventory.disks[*].size', 'gt', value=1000,
                  multiple='all', invert=True) is True


def test_a_node_field_is_read_from_the_ironic_node(plugins):
    assert _holds(plugins, 'node://driver', 'eq', value='ipmi')
    assert _holds(plugins, 'node://properties.capabilities', 'contains',
                  value='boot_mode:uefi')
    assert _holds(plugins, 'data://cpu_arch', 'eq', value='x86_64')


def test_a_path_that_cannot_be_walked_finds_nothing(plugins):
    assert paths.find('memory_mb[0]', {paths.DATA: DATA}) == []
    assert not _holds(plugins, 'memory_mb[0]', 'eq', value=8192)


def test_a_value_that_cannot_be_coerced_is_an_error(plugins):
    with pytest.raises(base.HookError, match="Cannot compare 'x86_64'"):
        _holds(plugins, 'cpu_arch', 'eq', value=1)


@pytest.mark.parametrize('op,params,message', [
    ('eq', {}, 'missing required parameter(s): value'),
    ('eq', {'value': None}, 'missing required parameter(s): value'),
    ('eq', {'value': 1, 'foo': 2, 'bar': 3},
     'unexpected parameter(s): bar, foo'),
    ('is-empty', {'value': 1}, 'unexpected parameter(s): value'),
    ('in-net', {'value': 'not-a-net'}, 'invalid value: '),
    ('matches', {'value': '(['}, 'invalid regular expression: '),
    ('contains', {'value': 5}, 'invalid regular expression: ')])
def test_operator_parameters_are_validated(plugins, op, params, message):
    with pytest.raises(ValueError) as info:
        plugins.condition(op).validate(params)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize('field,scheme,path', [
    ('memory_mb', 'data', 'memory_mb'), ('data://a.b', 'data', 'a.b'),
    ('node://driver', 'node', 'driver'), ('x://y', 'x', 'y')])
def test_a_field_without_scheme_is_introspection_data(field, scheme, path):
    assert paths.split(field) == (scheme, path)


@pytest.mark.parametrize('field,message', [
    ('swift://x', 'Unsupported scheme for field: swift, valid values are '
     'node:// or data://'),
    ('a..[', 'Unable to parse field JSON path a..[: ')])
def test_a_bad_field_is_refused(field, message):
    with pytest.raises(ValueError) as info:
        paths.validate(field)
    assert str(info.value).startswith(message)


def test_in_net_on_something_not_an_address_is_an_error(plugins):
    with pytest.raises(base.HookError, match="Cannot compare 'x86_64'"):
        _holds(plugins, 'cpu_arch', 'in-net', value='10.0.0.0/8')
