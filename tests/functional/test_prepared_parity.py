"""``inspector_ha/db/prepared.py`` against ``Connection.execute``, on every
database the service runs on: the same rows, the same values (timestamps,
booleans, expanded IN lists), the same exceptions, and a lost connection
handled as SQLAlchemy handles it."""

import datetime

import pytest
import sqlalchemy as sa

from inspector_ha.db import lookup
from inspector_ha.db import migration
from inspector_ha.db import nodes
from inspector_ha.db import prepared
from inspector_ha.db import rules as rules_db
from inspector_ha.db import statements as sql

UUID = '6c1f4a38-0000-4000-8000-000000000001'
AT = datetime.datetime(2026, 11, 26, 8, 30, 1, 123456)


@pytest.fixture
def engine(schema_url):
    engine = sa.create_engine(schema_url)
    yield engine
    engine.dispose()


def _node(**values):
    return dict({'uuid': UUID, 'state': 'waiting', 'generation': 3,
                 'attempt': 1, 'started_at': AT, 'manage_boot': False},
                **values)


def _request(request_id, status, minutes=0):
    at = AT + datetime.timedelta(minutes=minutes)
    return {'id': request_id, 'node_uuid': UUID, 'event': 'continue',
            'attempt': 1, 'status': status, 'deliveries': 0,
            'payload': '{"a": 1}', 'detail': None, 'created_at': at,
            'updated_at': at}


def _rows(conn, statement, params):
    return [tuple(row) for row in conn.execute(statement, params)]


def test_a_row_read_on_the_driver_equals_the_row_sqlalchemy_reads(engine):
    with engine.begin() as conn:
        assert prepared.rowcount(conn, sql.INSERT_NODE, _node()) == 1
        read = prepared.first(conn, sql.NODE, {'b_uuid': UUID})
        expected = conn.execute(sql.NODE, {'b_uuid': UUID}).first()
    assert read == dict(expected._mapping)
    assert read['started_at'] == AT and read['manage_boot'] is False


def test_every_rule_read_on_the_driver_equals_the_rules_sqlalchemy_reads(
        engine):
    with engine.begin() as conn:
        for index, at in enumerate([AT, AT.replace(microsecond=0), AT]):
            conn.execute(sa.insert(rules_db.RULES).values(
                uuid='%s%d' % (UUID[:-1], index), description=None,
                scope='s%d' % index, disabled=False, created_at=at))
        read = prepared.rows(conn, rules_db.EVERY_RULE, {})
        expected = _rows(conn, rules_db.EVERY_RULE, {})
        listed = rules_db.list_all(conn)
    assert read == expected and len(read) == 3
    assert ([tuple(map(type, row)) for row in read] ==
            [tuple(map(type, row)) for row in expected])
    assert [r['scope'] for r in listed] == ['s1', 's0', 's2']


def test_rules_conditions_and_actions_read_on_the_driver_are_those_written(
        engine):
    rules = [{'uuid': '%s%d' % (UUID[:-1], index), 'description': 'd',
              'scope': None,
              'conditions': [{'op': 'eq', 'field': 'memory_mb',
                              'multiple': 'any', 'invert': index == 0,
                              'value': 1024 * (index + 1)},
                             {'op': 'gt', 'field': 'cpus', 'multiple': 'all',
                              'invert': False, 'value': index}],
              'actions': [{'action': 'fail', 'message': 'm%d' % index}]}
             for index in range(2)]
    with engine.begin() as conn:
        for rule in rules:
            rules_db.create(conn, rule)
        listed = rules_db.list_all(conn)
    assert [(r['conditions'], r['actions']) for r in listed] == [
        (r['conditions'], r['actions']) for r in rules]
    assert [type(c['invert']) for r in listed for c in r['conditions']] == [
        bool] * 4


def test_one_lookup_attribute_is_written_on_the_driver_as_a_list_is(engine):
    with engine.begin() as conn:
        prepared.rowcount(conn, sql.INSERT_NODE, _node())
        nodes.add_attributes(conn, UUID, lookup.MAC, ['52:54:00:00:00:01'])
        nodes.add_attributes(conn, UUID, lookup.MAC,
                             ['52:54:00:00:00:02', '52:54:00:00:00:03'])
        values = prepared.rows(conn, sql.ATTRIBUTE_VALUES,
                               {'b_uuid': UUID, 'b_name': lookup.MAC})
        found = lookup.find(conn, macs=['52:54:00:00:00:01'])
    assert sorted(values) == [('52:54:00:00:00:0%d' % i,) for i in (1, 2, 3)]
    assert found == UUID


def test_a_timestamp_on_a_whole_second_is_written_as_sqlalchemy_writes_it(
        engine):
    whole = AT.replace(microsecond=0)
    started = sql.NODES.c.started_at
    with engine.begin() as conn:
        prepared.rowcount(conn, sql.INSERT_NODE, _node(started_at=whole))
        equal = conn.execute(sa.select(sql.NODES.c.uuid).where(
            started == whole)).all()
        earlier = conn.execute(sa.select(sql.NODES.c.uuid).where(
            started < whole)).all()
    assert (len(equal), earlier) == (1, [])


def test_a_value_of_the_wrong_type_is_refused_as_sqlalchemy_refuses_it(
        engine):
    with pytest.raises(sa.exc.StatementError, match='boolean'):
        with engine.begin() as conn:
            prepared.rowcount(conn, sql.INSERT_NODE, _node(manage_boot='no'))
    with engine.begin() as conn:
        assert prepared.first(conn, sql.NODE, {'b_uuid': UUID}) is None


def test_reads_of_several_rows_and_limits_are_those_of_sqlalchemy(engine):
    by_attempt = {'b_uuid': UUID, 'b_event': 'continue', 'b_attempt': 1}
    with engine.begin() as conn:
        prepared.rowcount(conn, sql.INSERT_NODE, _node())
        for minutes, status in enumerate(('done', 'pending', 'applied')):
            prepared.rowcount(conn, sql.INSERT_REQUEST,
                              _request('r%d' % minutes, status, minutes))
        for statement in (sql.REQUEST_STATUSES, sql.NEWEST_REQUEST):
            assert prepared.rows(conn, statement, by_attempt) == \
                _rows(conn, statement, by_attempt)
        assert prepared.first(conn, sql.NEWEST_REQUEST, by_attempt)['id'] \
            == 'r2'
        assert prepared.scalar(conn, sql.REQUEST, {'b_id': 'nope'}) is None


def test_an_expanded_in_list_matches_what_sqlalchemy_matches(engine):
    with engine.begin() as conn:
        prepared.rowcount(conn, sql.INSERT_NODE, _node())
        for number, status in enumerate(('pending', 'done', 'applied')):
            prepared.rowcount(conn, sql.INSERT_REQUEST,
                              _request('r%d' % number, status))
        closed = prepared.rowcount(conn, sql.UPDATE_ATTEMPT, {
            'b_uuid': UUID, 'b_attempt': 1, 'b_kept_event': 'reapply',
            'b_statuses': ('pending', 'applied'), 'b_id': 'r0',
            'status': 'rejected', 'updated_at': AT, 'detail': 'over'})
        statuses = dict(_rows(conn, sa.select(sql.REQUESTS.c.id,
                                              sql.REQUESTS.c.status), {}))
    assert closed == 1
    assert statuses == {'r0': 'pending', 'r1': 'done', 'r2': 'rejected'}


def test_a_conditional_update_counts_only_the_row_it_matched(engine):
    write = {'state': 'processing', 'generation': 4, 'b_uuid': UUID,
             'b_state': 'waiting', 'b_generation': 3}
    with engine.begin() as conn:
        prepared.rowcount(conn, sql.INSERT_NODE, _node())
        assert prepared.rowcount(conn, sql.MOVE_NODE, write) == 1
        assert prepared.rowcount(conn, sql.MOVE_NODE, write) == 0
        assert prepared.rows(conn, sql.NODE_FOR_UPDATE,
                             {'b_uuid': UUID}) == [('processing', 4)]


def test_a_driver_error_is_raised_as_sqlalchemy_raises_it(engine):
    with engine.begin() as conn:
        prepared.rowcount(conn, sql.INSERT_NODE, _node())
    with pytest.raises(sa.exc.IntegrityError) as raised:
        with engine.begin() as conn:
            prepared.rowcount(conn, sql.INSERT_NODE, _node())
    assert 'INSERT INTO nodes' in str(raised.value)
    with engine.begin() as conn:
        assert prepared.scalar(conn, sql.NODE, {'b_uuid': UUID}) == UUID


def test_a_write_outside_a_transaction_begins_one_as_sqlalchemy_does(
        engine):
    with engine.connect() as conn:
        prepared.rowcount(conn, sql.INSERT_NODE, _node())
        assert conn.in_transaction()
        conn.rollback()
    with engine.connect() as conn:
        assert prepared.first(conn, sql.NODE, {'b_uuid': UUID}) is None


def test_a_lost_postgresql_connection_is_invalidated_and_the_next_works(
        pg_url):
    migration.upgrade(pg_url)
    engine = sa.create_engine(pg_url)
    try:
        with pytest.raises(sa.exc.OperationalError) as raised:
            with engine.begin() as conn:
                pid = conn.exec_driver_sql('SELECT pg_backend_pid()').scalar()
                with engine.begin() as other:
                    other.exec_driver_sql(
                        'SELECT pg_terminate_backend(%d)' % pid)
                prepared.first(conn, sql.NODE, {'b_uuid': UUID})
        assert raised.value.connection_invalidated
        assert 'SELECT nodes.uuid' in str(raised.value)
        with engine.begin() as conn:
            assert prepared.first(conn, sql.NODE, {'b_uuid': UUID}) is None
    finally:
        engine.dispose()
