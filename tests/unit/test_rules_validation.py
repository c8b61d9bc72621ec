"""Rule validation (upstream's API checks, schemas and plugin parameters)
and the rule tables on a real SQLite file."""

import datetime
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from inspector_ha.db import migration
from inspector_ha.db import rules as rules_db
from inspector_ha.rules import engine
from inspector_ha.rules import plugins as plugins_mod

FAIL = {'action': 'fail', 'message': 'boom'}
COND = {'op': 'eq', 'field': 'memory_mb', 'value': 1024}


@pytest.fixture(scope='module')
def plugins():
    # NOTE: the messages list the plugins: only inspector-ha's own.
    return plugins_mod.Plugins(upstream_plugins=False)


def _refused(plugins, body):
    with pytest.raises(plugins_mod.InvalidRule) as info:
        engine.validate(body, plugins)
    return str(info.value)


def test_defaults_are_filled_in(plugins):
    rule = engine.validate({'actions': [FAIL], 'conditions': [COND]},
                           plugins)
    assert uuidlib.UUID(rule['uuid'])
    assert rule == {'uuid': rule['uuid'], 'description': None,
                    'scope': None,
                    'conditions': [dict(COND, multiple='any',
                                        invert=False)],
                    'actions': [FAIL]}


def test_a_given_uuid_is_kept_in_canonical_form(plugins):
    uuid = str(uuidlib.uuid4())
    rule = engine.validate({'uuid': uuid.upper(), 'actions': [FAIL]},
                           plugins)
    assert rule['uuid'] == uuid


@pytest.mark.parametrize('body,message', [
    ({'uuid': 'abc', 'actions': [FAIL]}, 'Invalid UUID value'),
    ({'scope': 'x' * 256, 'actions': [FAIL]},
     "Invalid data: the length of the 'scope' attribute must not exceed "
     "255 characters, got 256"),
    ({'scope': 5, 'actions': [FAIL]},
     "Invalid data: 'scope' must be a string, got 5"),
    ({'description': ['x'], 'actions': [FAIL]},
     "Invalid data: 'description' must be a string, got ['x']"),
    ([FAIL], 'Invalid data: expected a JSON object, got list'),
    ({}, 'Validation failed for actions: [] should be non-empty'),
    ({'actions': []}, 'Validation failed for actions: [] should be '
     'non-empty'),
    ({'actions': FAIL}, "Validation failed for actions: {'action': "
     "'fail', 'message': 'boom'} is not of type 'array'"),
    ({'actions': [{'message': 'x'}]},
     "Validation failed for actions: 'action' is a required property"),
    ({'actions': ['fail']},
     "Validation failed for actions: 'fail' is not of type 'object'"),
    ({'actions': [{'action': 'explode'}]},
     "Validation failed for actions: 'explode' is not one of ['add-trait',"
     " 'example', 'extend-attribute', 'fail', 'remove-trait', "
     "'set-attribute', 'set-capability']"),
    ({'conditions': None, 'actions': [FAIL]},
     "Validation failed for conditions: None is not of type 'array'"),
    ({'conditions': [{'op': 'eq'}], 'actions': [FAIL]},
     "Validation failed for conditions: 'field' is a required property"),
    ({'conditions': [{'op': 'approx', 'field': 'x'}], 'actions': [FAIL]},
     "Validation failed for conditions: 'approx' is not one of "
     "['contains', 'eq', 'ge', 'gt', 'in-net', 'is-empty', 'le', 'lt', "
     "'matches', 'ne']"),
    ({'conditions': [dict(COND, field=5)], 'actions': [FAIL]},
     "Validation failed for conditions: 5 is not of type 'string'"),
    ({'conditions': [dict(COND, multiple='most')], 'actions': [FAIL]},
     "Validation failed for conditions: 'most' is not one of ['all', "
     "'any', 'first']"),
    ({'conditions': [dict(COND, invert='yes')], 'actions': [FAIL]},
     "Validation failed for conditions: 'yes' is not of type 'boolean'"),
    ({'conditions': [dict(COND, field='swift://x')], 'actions': [FAIL]},
     'Unsupported scheme for field: swift, valid values are node:// or '
     'data://'),
    ({'conditions': [dict(COND, extra=1)], 'actions': [FAIL]},
     'Invalid parameters for operator eq: unexpected parameter(s): '
     'extra'),
    ({'actions': [{'action': 'set-capability'}]},
     'Invalid parameters for action set-capability: missing required '
     'parameter(s): name')])
def test_a_bad_rule_is_refused_with_upstreams_message(plugins, body,
                                                      message):
    assert _refused(plugins, body) == message


def test_the_uuid_and_scope_are_checked_before_the_schemas(plugins):
    assert _refused(plugins, {'uuid': 'x'}) == 'Invalid UUID value'


def test_an_empty_uuid_means_a_generated_one(plugins):
    assert engine.validate({'uuid': '', 'actions': [FAIL]}, plugins)['uuid']


# The tables.

def _create(store, plugins, **body):
    rule = engine.validate(dict({'actions': [FAIL]}, **body), plugins)
    return store.transaction(rules_db.create, rule)


def test_a_rule_reads_back_as_it_was_validated(store, plugins):
    created = _create(store, plugins, description='d', scope='s',
                      conditions=[COND, dict(COND, op='ne', invert=True,
                                             multiple='all')],
                      actions=[FAIL, {'action': 'set-capability',
                                      'name': 'x', 'value': {'a': [1]}}])
    assert store.transaction(rules_db.get, created['uuid']) == created
    assert [c['op'] for c in created['conditions']] == ['eq', 'ne']
    assert created['actions'][1]['value'] == {'a': [1]}


def test_rules_are_listed_in_creation_order(store, plugins):
    uuids = [_create(store, plugins)['uuid'] for _ in range(4)]
    assert [r['uuid'] for r in store.transaction(rules_db.list_all)] == \
        uuids


def test_a_duplicate_uuid_is_refused(store, plugins):
    uuid = _create(store, plugins)['uuid']
    with pytest.raises(rules_db.Duplicate) as info:
        _create(store, plugins, uuid=uuid)
    assert str(info.value) == 'Rule with UUID %s already exists' % uuid


def test_deleting_a_rule_deletes_its_conditions_and_actions(store,
                                                            plugins):
    keep = _create(store, plugins, conditions=[COND])
    gone = _create(store, plugins, conditions=[COND])
    store.transaction(rules_db.delete, gone['uuid'])
    with pytest.raises(rules_db.NotFound, match='was not found'):
        store.transaction(rules_db.get, gone['uuid'])
    assert store.transaction(rules_db.list_all) == [keep]
    assert _count(store, rules_db.RuleCondition) == 1
    assert _count(store, rules_db.RuleAction) == 1


def test_deleting_an_unknown_rule_is_not_found(store):
    uuid = str(uuidlib.uuid4())
    with pytest.raises(rules_db.NotFound) as info:
        store.transaction(rules_db.delete, uuid)
    assert str(info.value) == 'Rule %s was not found' % uuid


def test_deleting_all_rules_empties_the_three_tables(store, plugins):
    for _ in range(3):
        _create(store, plugins, conditions=[COND])
    store.transaction(rules_db.delete_all)
    assert [_count(store, t) for t in (
        rules_db.Rule, rules_db.RuleCondition, rules_db.RuleAction)] == \
        [0, 0, 0]


def test_the_creation_time_is_recorded(store, plugins):
    uuid = _create(store, plugins)['uuid']
    row = store.transaction(lambda s: s.execute(
        sa.select(rules_db.RULES).where(rules_db.RULES.c.uuid == uuid)).one())
    assert isinstance(row.created_at, datetime.datetime)
    assert row.disabled is False


def _count(store, table):
    return store.transaction(lambda s: s.scalar(
        sa.select(sa.func.count()).select_from(table)))


def test_the_rules_migration_walks_down_and_up(db_url, store, plugins):
    _create(store, plugins)
    store.dispose()
    migration.downgrade(db_url, '0001')
    assert 'rules' not in _tables(db_url)
    migration.upgrade(db_url, '0002')
    assert migration.current(db_url) == '0002'
    assert {'rules', 'rule_conditions', 'rule_actions'} <= _tables(db_url)


def _tables(url):
    engine_ = sa.create_engine(url)
    try:
        return set(sa.inspect(engine_).get_table_names())
    finally:
        engine_.dispose()
