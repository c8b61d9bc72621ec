"""Rule actions on a NodeTarget, the formatting of their values, and the
engine applying stored rules to a node.

Ironic is a remote peer: a recorder stands in for the facade's write
calls here; ``tests/functional/test_rules.py`` runs rules against a real
Ironic.
"""

import types

from openstack.baremetal.v1 import node as sdk_node
import pytest

from inspector_ha.db import rules as rules_db
from inspector_ha.processing import base
from inspector_ha.processing import changes
from inspector_ha.rules import engine
from inspector_ha.rules import plugins as plugins_mod
from inspector_ha.processing import target as target_mod

UUID = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
DATA = {'inventory': {'cpu': {'count': 8, 'architecture': 'x86_64'},
                      'bmc_address': '192.0.2.10'},
        'memory_mb': 8192, 'cpus': 8}


@pytest.fixture(scope='module')
def plugins():
    return plugins_mod.Plugins()


class RecordingIronic:
    def __init__(self):
        self.calls = []

    def patch_node(self, uuid, patch, reset_interfaces=None):
        if patch:
            self.calls.append(('patch_node', uuid, list(patch),
                               reset_interfaces))

    def add_trait(self, uuid, name):
        self.calls.append(('add_trait', uuid, name))

    def remove_trait(self, uuid, name):
        self.calls.append(('remove_trait', uuid, name))


def _target(**node):
    return target_mod.NodeTarget(UUID, dict({'properties': {}}, **node))


def _act(plugins, target, action, data=DATA, **params):
    rule = {'uuid': UUID, 'description': None,
            'actions': [dict(params, action=action)]}
    engine.run_actions(rule, target, data, plugins)
    return target


def test_every_upstream_action_is_an_entry_point(plugins):
    # NOTE: without the test plugin's (tests/plugins/upstream_style).
    assert [n for n in plugins.action_names
            if not n.startswith('upstream-')] == sorted([
        'fail', 'set-attribute', 'set-capability', 'extend-attribute',
        'add-trait', 'remove-trait', 'example'])


def test_fail_ends_with_its_message(plugins):
    with pytest.raises(base.HookError) as info:
        _act(plugins, _target(), 'fail', message='no such hardware')
    assert str(info.value) == 'no such hardware'


def test_set_attribute_adds_the_value_at_its_path(plugins):
    target = _act(plugins, _target(), 'set-attribute',
                  path='/extra/rack', value='r1')
    _act(plugins, target, 'set-attribute', path='properties/x', value=None)
    assert target.patches == [
        {'op': 'add', 'path': '/extra/rack', 'value': 'r1'},
        {'op': 'add', 'path': '/properties/x', 'value': None}]
    assert not target.reset_interfaces


@pytest.mark.parametrize('params,reset', [
    ({}, True), ({'reset_interfaces': True}, True),
    ({'reset_interfaces': False}, False)])
def test_setting_the_driver_resets_interfaces_unless_told_not_to(
        plugins, params, reset):
    target = _act(plugins, _target(), 'set-attribute', path='/driver',
                  value='ipmi', **params)
    assert target.reset_interfaces is reset


def test_set_capability_merges_into_the_existing_capabilities(plugins):
    target = _target(properties={'capabilities': 'boot_mode:uefi,a:b'})
    _act(plugins, target, 'set-capability', name='cpus', value='4')
    _act(plugins, target, 'set-capability', name='a')
    assert target.patches[-1] == {
        'op': 'add', 'path': '/properties/capabilities',
        'value': 'boot_mode:uefi,cpus:4'}


def test_extend_attribute_appends_to_a_list_unique_if_asked(plugins):
    target = _target(extra={'tags': ['a']})
    for value in ('b', 'b'):
        _act(plugins, target, 'extend-attribute', path='/extra/tags',
             value=value)
    _act(plugins, target, 'extend-attribute', path='/extra/tags',
         value='a', unique=True)
    _act(plugins, target, 'extend-attribute', path='/extra/new', value=1)
    assert target.patches[-2]['value'] == ['a', 'b', 'b']
    assert target.patches[-1] == {'op': 'add', 'path': '/extra/new',
                                  'value': [1]}
    assert target.view['extra']['tags'] == ['a', 'b', 'b']


def test_traits_are_collected_in_order(plugins):
    target = _act(plugins, _target(), 'add-trait', name='CUSTOM_A')
    _act(plugins, target, 'remove-trait', name='CUSTOM_B')
    _act(plugins, target, 'example')
    assert target.traits == [('add', 'CUSTOM_A'), ('remove', 'CUSTOM_B')]
    assert target.patches == []


@pytest.mark.parametrize('action,params,message', [
    ('fail', {}, 'missing required parameter(s): message'),
    ('set-attribute', {'path': '/x'}, 'missing required parameter(s): '
     'value'),
    ('set-attribute', {'value': 1}, 'missing required parameter(s): path'),
    ('set-capability', {'name': 'x', 'other': 1},
     'unexpected parameter(s): other'),
    ('extend-attribute', {'path': '/x'},
     'missing required parameter(s): value'),
    ('add-trait', {}, 'missing required parameter(s): name'),
    ('example', {'foo': 'bar'}, 'unexpected parameter(s): foo')])
def test_action_parameters_are_validated(plugins, action, params, message):
    with pytest.raises(ValueError) as info:
        plugins.action(action).validate(params)
    assert str(info.value) == message


def test_set_attribute_accepts_a_null_value(plugins):
    plugins.action('set-attribute').validate({'path': '/x', 'value': None})


# Formatting.

def test_values_are_formatted_with_the_introspection_data():
    assert engine.format_value('{data[inventory][cpu][count]}', DATA) == '8'
    assert engine.format_value('{data[memory_mb]} MiB', DATA) == '8192 MiB'


def test_formatting_goes_into_dicts_keys_and_lists():
    value = {'{data[cpus]}': ['{data[inventory][bmc_address]}', 5,
                              {'x': '{data[memory_mb]}'}], 'n': None}
    assert engine.format_value(value, DATA) == {
        '8': ['192.0.2.10', 5, {'x': '8192'}], 'n': None}


def test_a_bad_key_fails_the_rule_with_an_error():
    with pytest.raises(base.HookError) as info:
        engine.format_value(['{data[inventory][gpu]}'], DATA)
    assert str(info.value) == ('Invalid formatting variable key provided '
                               "in value {data[inventory][gpu]}: 'gpu'")


@pytest.mark.parametrize('value', ['{data[cpus][0]}', '{other}', '{'])
def test_other_formatting_mistakes_fail_the_rule_too(value):
    with pytest.raises(base.HookError, match='Invalid formatting'):
        engine.format_value(value, DATA)


def test_only_the_formatted_parameters_are_formatted(plugins):
    target = _act(plugins, _target(), 'set-attribute',
                  path='/extra/{data[cpus]}', value='{data[cpus]}')
    assert target.patches == [
        {'op': 'add', 'path': '/extra/{data[cpus]}', 'value': '8'}]


# The engine on stored rules.

def _rule(store, plugins, actions, conditions=(), scope=None,
          description=None):
    rule = engine.validate({'conditions': list(conditions),
                            'actions': actions, 'scope': scope,
                            'description': description}, plugins)
    return store.transaction(rules_db.create, rule)['uuid']


def _context(ironic, **properties):
    node = sdk_node.Node(id=UUID, driver='fake-hardware',
                         properties=properties)
    return base.NodeContext(ironic, node, [])


def _send(store, ironic, context):
    """Apply the rules, then send every change collected, as a worker
    does; return the calls made."""
    engine.apply(store.transaction(rules_db.list_all), context, DATA)
    changes.apply(ironic, context.uuid, context.changes())
    return ironic.calls


def test_no_rules_change_nothing(store):
    ironic = RecordingIronic()
    context = _context(ironic)
    assert (_send(store, ironic, context), context.patches) == ([], [])


def test_matching_rules_join_the_hooks_patches_and_send_traits(
        store, plugins):
    _rule(store, plugins, [
        {'action': 'set-attribute', 'path': '/properties/from_rule',
         'value': '{data[inventory][cpu][count]}'},
        {'action': 'add-trait', 'name': 'CUSTOM_BIG'}],
        [{'op': 'ge', 'field': 'memory_mb', 'value': 4096}])
    _rule(store, plugins, [{'action': 'add-trait', 'name': 'CUSTOM_NO'}],
          [{'op': 'lt', 'field': 'memory_mb', 'value': 4096}])
    ironic = RecordingIronic()
    context = _context(ironic)
    context.set_property('cpus', '8')
    assert _send(store, ironic, context) == [
        ('patch_node', UUID, [
            {'op': 'add', 'path': '/properties/cpus', 'value': '8'},
            {'op': 'add', 'path': '/properties/from_rule', 'value': '8'}],
         None),
        ('add_trait', UUID, 'CUSTOM_BIG')]


def test_rules_see_the_node_as_the_hooks_left_it(store, plugins):
    _rule(store, plugins, [{'action': 'add-trait', 'name': 'CUSTOM_8'}],
          [{'op': 'eq', 'field': 'node://properties.cpus', 'value': 8}])
    ironic = RecordingIronic()
    context = _context(ironic, cpus='2')
    context.set_property('cpus', '8')
    engine.apply(store.transaction(rules_db.list_all), context, DATA)
    assert context.traits == [('add', 'CUSTOM_8')]


def test_a_scoped_rule_applies_only_to_nodes_of_its_scope(store, plugins):
    _rule(store, plugins, [{'action': 'add-trait', 'name': 'CUSTOM_A'}],
          scope='rack-a')
    calls = {}
    for scope in ('rack-a', 'rack-b', None):
        ironic = RecordingIronic()
        properties = {'inspection_scope': scope} if scope else {}
        calls[scope] = _send(store, ironic, _context(ironic, **properties))
    assert calls == {'rack-a': [('add_trait', UUID, 'CUSTOM_A')],
                     'rack-b': [], None: []}


def test_all_conditions_are_checked_before_any_action_runs(store, plugins):
    _rule(store, plugins, [{'action': 'set-capability', 'name': 'a',
                            'value': '1'}])
    _rule(store, plugins, [{'action': 'set-capability', 'name': 'b',
                            'value': '2'}],
          [{'op': 'is-empty', 'field': 'node://properties.capabilities'}])
    ironic = RecordingIronic()
    context = _context(ironic)
    engine.apply(store.transaction(rules_db.list_all), context, DATA)
    assert context.patches[-1]['value'] == 'a:1,b:2'


def test_a_failing_rule_sends_nothing_to_ironic(store, plugins):
    _rule(store, plugins, [{'action': 'add-trait', 'name': 'CUSTOM_A'}])
    _rule(store, plugins, [{'action': 'fail', 'message': 'too small'}],
          [{'op': 'lt', 'field': 'inventory.cpu.count', 'value': 16}])
    ironic = RecordingIronic()
    context = _context(ironic)
    context.set_property('cpus', '8')
    with pytest.raises(base.HookError, match='^too small$'):
        _send(store, ironic, context)
    assert ironic.calls == []
    assert len(context.patches) == 1


def test_a_driver_change_is_sent_with_every_patch_and_interface_reset(
        store, plugins):
    _rule(store, plugins, [{'action': 'set-attribute', 'path': '/driver',
                            'value': 'ipmi'}])
    ironic = RecordingIronic()
    context = _context(ironic)
    context.set_property('cpus', '8')
    [(name, uuid, patch, reset)] = _send(store, ironic, context)
    assert (name, reset, len(patch)) == ('patch_node', True, 2)


def test_a_node_without_to_dict_is_read_from_its_attributes(store,
                                                           plugins):
    _rule(store, plugins, [{'action': 'add-trait', 'name': 'CUSTOM_A'}],
          [{'op': 'eq', 'field': 'node://properties.x', 'value': 'y'}])
    ironic = RecordingIronic()
    node = types.SimpleNamespace(id=UUID, properties={'x': 'y'})
    assert _send(store, ironic, base.NodeContext(ironic, node, [])) == [
        ('add_trait', UUID, 'CUSTOM_A')]
