"""Introspection rules in Ironic's form (inspection rules, API 1.96):
each upstream condition and action, and the ones that cannot be
converted, with why. tests/functional/test_export_to_ironic.py runs the
converted rules in a real Ironic."""

import pytest

from inspector_ha.rules import export


def _rule(conditions=(), actions=(), **extra):
    return dict({'uuid': 'r-1', 'description': 'a rule', 'scope': None,
                 'conditions': list(conditions),
                 'actions': list(actions) or [
                     {'action': 'add-trait', 'name': 'CUSTOM_X'}]}, **extra)


def _cond(op, field='inventory.cpu.architecture', value=None, **extra):
    cond = dict({'op': op, 'field': field, 'multiple': 'any',
                 'invert': False}, **extra)
    if value is not None:
        cond['value'] = value
    return cond


@pytest.mark.parametrize('field, placeholder', [
    ('inventory.cpu.count', '{inventory[cpu][count]}'),
    ('data://inventory.disks[0].size', '{inventory[disks][0][size]}'),
    ('inventory', '{inventory}'),
    ('local_gb', '{plugin_data[local_gb]}'),
    ('data://root_disk.name', '{plugin_data[root_disk][name]}'),
    ('node://properties.cpus', '{node.properties[cpus]}'),
    ('node://driver_info.ipmi_address', '{node.driver_info[ipmi_address]}'),
])
def test_a_field_becomes_a_format_placeholder(field, placeholder):
    assert export.placeholder(field) == placeholder


@pytest.mark.parametrize('field', [
    'inventory.interfaces[*].mac_address', 'inventory.disks[0:2]',
    'node://is_maintenance', 'node://instance_id'])
def test_a_field_of_many_values_or_another_name_is_not_converted(field):
    with pytest.raises(export.Unconvertible, match='field'):
        export.placeholder(field)


@pytest.mark.parametrize('cond, expected', [
    (_cond('eq', value='x86_64'),
     {'op': 'eq', 'args': {'values': ['{inventory[cpu][architecture]}',
                                      'x86_64']}}),
    (_cond('eq', field='inventory.cpu.count', value=4),
     {'op': 'eq', 'args': {'values': ['{inventory[cpu][count]}', '4']}}),
    (_cond('ne', value='x86_64'),
     {'op': '!eq', 'args': {'values': ['{inventory[cpu][architecture]}',
                                       'x86_64']}}),
    (_cond('ne', value='x86_64', invert=True),
     {'op': 'eq', 'args': {'values': ['{inventory[cpu][architecture]}',
                                      'x86_64']}}),
    (_cond('is-empty', field='extra_hardware'),
     {'op': 'is-empty', 'args': {'value': '{plugin_data[extra_hardware]}'}}),
    (_cond('in-net', field='inventory.bmc_address', value='10.0.0.0/8'),
     {'op': 'in-net', 'args': {'address': '{inventory[bmc_address]}',
                               'subnet': '10.0.0.0/8'}}),
    (_cond('matches', value='x86_.*'),
     {'op': 'matches', 'args': {'value': '{inventory[cpu][architecture]}',
                                'regex': 'x86_.*'}}),
    (_cond('contains', value='86', invert=True),
     {'op': '!contains', 'args': {'value': '{inventory[cpu][architecture]}',
                                  'regex': '86'}}),
])
def test_each_condition_has_its_ironic_form(cond, expected):
    assert export.condition(cond) == expected


@pytest.mark.parametrize('cond, why', [
    (_cond('gt', field='inventory.cpu.count', value=2), 'as text'),
    (_cond('le', field='inventory.cpu.count', value=2), 'as text'),
    (_cond('eq', field='inventory.memory.physical_mb', value=1.5),
     'text or integer'),
    (_cond('eq', value=['a']), 'text or integer'),
    (_cond('custom-op', value='a'), 'no such operator'),
])
def test_a_condition_ironic_cannot_express_is_refused_with_why(cond, why):
    with pytest.raises(export.Unconvertible, match=why):
        export.condition(cond)


@pytest.mark.parametrize('act, expected', [
    ({'action': 'set-attribute', 'path': '/extra/rack',
      'value': 'r-{data[inventory][cpu][count]}'},
     [{'op': 'set-attribute', 'args': {
         'path': '/extra/rack', 'value': 'r-{inventory[cpu][count]}'}}]),
    ({'action': 'extend-attribute', 'path': '/extra/tags', 'value': 'a',
      'unique': True},
     [{'op': 'extend-attribute', 'args': {
         'path': '/extra/tags', 'value': 'a', 'unique': True}}]),
    ({'action': 'set-capability', 'name': 'boot_mode', 'value': 'uefi'},
     [{'op': 'unset-capability', 'args': {'name': 'boot_mode'}},
      {'op': 'set-capability', 'args': {'name': 'boot_mode',
                                        'value': 'uefi'}}]),
    ({'action': 'set-capability', 'name': 'boot_mode'},
     [{'op': 'unset-capability', 'args': {'name': 'boot_mode'}}]),
    ({'action': 'add-trait', 'name': 'CUSTOM_A'},
     [{'op': 'add-trait', 'args': {'name': 'CUSTOM_A'}}]),
    ({'action': 'remove-trait', 'name': 'CUSTOM_A'},
     [{'op': 'remove-trait', 'args': {'name': 'CUSTOM_A'}}]),
    ({'action': 'fail', 'message': 'no {braces} here'},
     [{'op': 'fail', 'args': {'msg': 'no {braces} here'}}]),
    ({'action': 'set-attribute', 'path': '/extra/x',
      'value': '{data[local_gb]}'},
     [{'op': 'set-attribute', 'args': {
         'path': '/extra/x', 'value': '{plugin_data[local_gb]}'}}]),
])
def test_each_action_has_its_ironic_form(act, expected):
    assert export.action(act) == expected


@pytest.mark.parametrize('act, why', [
    ({'action': 'set-attribute', 'path': '/driver', 'value': 'ipmi'},
     'interfaces'),
    ({'action': 'set-attribute', 'path': '/extra/x', 'value': '{data}'},
     'whole data'),
    ({'action': 'custom-action'}, 'no such action'),
])
def test_an_action_ironic_cannot_express_is_refused_with_why(act, why):
    with pytest.raises(export.Unconvertible, match=why):
        export.action(act)


def test_a_scoped_rule_gets_a_condition_on_the_inspection_scope():
    rule = export.convert(_rule([_cond('eq', value='x86_64')],
                                scope='rack-{1}'), priority=1)
    assert rule['conditions'][0] == {'op': 'eq', 'args': {'values': [
        '{node.properties[inspection_scope]}', 'rack-{{1}}']}}


def test_the_oldest_rule_gets_the_highest_priority_and_keeps_its_uuid():
    rules = [_rule(uuid='old'), _rule(uuid='new'),
             _rule([_cond('gt', value=1)], uuid='refused')]
    converted, refused = export.convert_all(rules)
    assert [(r['uuid'], r['priority']) for r in converted] == [
        ('old', 3), ('new', 2)]
    assert set(refused) == {'refused'}
    assert 'as text' in refused['refused']


def test_a_literal_keeps_its_braces_through_ironic_formatting():
    cond = export.condition(_cond('eq', value='{not a placeholder}'))
    assert cond['args']['values'][1].format() == '{not a placeholder}'
