"""The SQL store on a real SQLite file: node rows, ledger, lookup, schema."""

import datetime
import threading
import time
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from inspector_ha import service as service_mod
from inspector_ha.common import retry
from inspector_ha.common import timeutils
from inspector_ha.db import api as db_api
from inspector_ha.db import conflicts
from inspector_ha.db import lookup
from inspector_ha.db import migration
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st

ACTOR = 'unit-test'
MAC1, MAC2, MAC3 = '11:22:33:44:55:66', '11:22:33:44:55:77', \
    '11:22:33:44:55:88'


def _node(store, uuid):
    return store.transaction(nodes.get, uuid)


def _history(store, uuid):
    return [(t.event, t.from_state, t.to_state, t.generation)
            for t in store.transaction(nodes.history, uuid)]


def _attributes(store, uuid):
    def query(session):
        return sorted(session.execute(
            sa.select(models.Attribute.name, models.Attribute.value).where(
                models.Attribute.node_uuid == uuid)).all())
    return store.transaction(query)


def test_a_created_node_starts_its_first_attempt(store):
    uuid = str(uuidlib.uuid4())
    assert store.transaction(nodes.create, uuid, True, ACTOR, 'r1') == 1
    node = _node(store, uuid)
    assert (node.state, node.generation, node.attempt) == ('starting', 1, 1)
    assert node.started_at is not None and node.finished_at is None
    [record] = store.transaction(nodes.history, uuid)
    assert (record.event, record.from_state, record.to_state,
            record.request_id, record.actor) == ('start', None, 'starting',
                                                 'r1', ACTOR)


def test_a_transition_moves_the_node_and_bumps_its_generation(store,
                                                              put_node):
    uuid = put_node(st.STARTING)
    node = _node(store, uuid)
    stayed = store.transaction(nodes.transition, node, st.WAIT, st.WAITING,
                               ACTOR)
    assert 0 <= stayed < 60  # seconds in starting
    node = _node(store, uuid)
    assert (node.state, node.generation, node.finished_at) == (
        'waiting', 2, None)


@pytest.mark.parametrize('change', [{'generation': 7},
                                    {'state': st.PROCESSING}])
def test_a_transition_read_from_a_stale_row_raises_and_changes_nothing(
        store, put_node, change):
    uuid = put_node(st.WAITING, macs=[MAC1])
    stale = _node(store, uuid)
    for name, value in change.items():
        setattr(stale, name, value)
    before = _history(store, uuid)
    with pytest.raises(conflicts.StaleWrite):
        store.transaction(nodes.transition, stale, st.FAIL, st.ERROR, ACTOR,
                          error='lost')
    node = _node(store, uuid)
    assert (node.state, node.generation, node.error) == ('waiting', 2, None)
    assert _history(store, uuid) == before
    assert _attributes(store, uuid) == [('mac', MAC1)]


def test_of_two_threads_racing_the_same_transition_exactly_one_wins(
        store, put_node):
    uuid = put_node(st.WAITING)
    barrier = threading.Barrier(2, timeout=10)
    outcomes = []

    def race(name):
        node = _node(store, uuid)
        barrier.wait()
        try:
            store.transaction(nodes.transition, node, st.PROCESS,
                              st.PROCESSING, name)
            outcomes.append('won')
        except conflicts.StaleWrite:
            outcomes.append('lost')

    threads = [threading.Thread(target=race, args=('t%d' % i,))
               for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()
    assert sorted(outcomes) == ['lost', 'won']
    assert _node(store, uuid).generation == 3
    assert [h[0] for h in _history(store, uuid)].count('process') == 1


@pytest.mark.parametrize('event,final,error', [
    (st.FINISH, st.FINISHED, None), (st.FAIL, st.ERROR, 'boom')])
def test_entering_a_final_state_sets_finished_at_error_and_drops_attributes(
        store, put_node, event, final, error):
    uuid = put_node(st.PROCESSING, macs=[MAC1], bmcs=['10.0.0.1'])
    node = _node(store, uuid)
    store.transaction(nodes.transition, node, event, final, ACTOR,
                      error=error)
    node = _node(store, uuid)
    assert node.state == final
    assert node.finished_at is not None and node.error == error
    assert _attributes(store, uuid) == []


@pytest.mark.parametrize('state', sorted(set(st.STATES) -
                                         st.STARTABLE_STATES))
def test_a_restart_from_a_state_that_cannot_start_raises_invalid_state(
        store, put_node, state):
    uuid = put_node(state, macs=[MAC1])
    node = _node(store, uuid)
    with pytest.raises(nodes.InvalidState) as info:
        store.transaction(nodes.restart, node, True, ACTOR, 'r2')
    assert info.value.state == state
    after = _node(store, uuid)
    assert (after.state, after.generation, after.attempt) == (
        state, node.generation, 1)


@pytest.mark.parametrize('state', sorted(st.STARTABLE_STATES))
def test_a_restart_begins_a_new_attempt_from_scratch(store, put_node,
                                                     state):
    uuid = put_node(state, macs=[MAC1])
    node = _node(store, uuid)
    assert store.transaction(nodes.restart, node, False, ACTOR, 'r2') == 2
    after = _node(store, uuid)
    assert (after.state, after.attempt, after.manage_boot) == (
        'starting', 2, False)
    assert after.generation == node.generation + 1
    assert after.finished_at is None and after.error is None
    assert _attributes(store, uuid) == []


def test_history_records_every_committed_transition(store, put_node):
    uuid = put_node(st.STARTING)
    for event, target in [(st.WAIT, st.WAITING), (st.PROCESS, st.PROCESSING),
                          (st.FINISH, st.FINISHED)]:
        store.transaction(nodes.transition, _node(store, uuid), event,
                          target, ACTOR, 'req-' + event)
    with pytest.raises(RuntimeError):
        store.transaction(_transition_then_fail, _node(store, uuid))
    store.transaction(nodes.restart, _node(store, uuid), True, ACTOR, 'r2')
    assert _history(store, uuid) == [
        ('start', None, 'starting', 1), ('wait', 'starting', 'waiting', 2),
        ('process', 'waiting', 'processing', 3),
        ('finish', 'processing', 'finished', 4),
        ('start', 'finished', 'starting', 5)]


def _transition_then_fail(session, node):
    nodes.transition(session, node, st.FINISH, st.FINISHED, ACTOR)
    raise RuntimeError('rolled back')


# The request ledger and outbox.

def test_a_request_is_added_pending_and_read_back(store, put_node):
    uuid = put_node(st.WAITING)
    row = store.transaction(ledger.add, uuid, st.PROCESS, 1,
                            payload={'inventory': {'a': 1}})
    got = store.transaction(ledger.get, row.id)
    assert (got.node_uuid, got.event, got.attempt, got.status,
            got.deliveries) == (uuid, 'process', 1, 'pending', 0)
    assert ledger.payload(got) == {'inventory': {'a': 1}}
    assert store.transaction(ledger.get, 'no-such-request') is None


def test_a_request_without_payload_has_an_empty_one(store):
    row = store.transaction(ledger.add, 'n', st.ABORT, 1, request_id='r')
    assert row.id == 'r'
    assert ledger.payload(store.transaction(ledger.get, 'r')) == {}


def test_marking_a_request_records_its_status_and_detail(store):
    row = store.transaction(ledger.add, 'n', st.ABORT, 1)
    store.transaction(ledger.mark, row.id, ledger.REJECTED, 'why')
    got = store.transaction(ledger.get, row.id)
    assert (got.status, got.detail) == ('rejected', 'why')
    assert got.updated_at >= row.updated_at


def test_deliveries_are_counted_one_by_one(store):
    row = store.transaction(ledger.add, 'n', st.ABORT, 1)
    counts = [store.transaction(ledger.count_delivery, row.id)
              for _ in range(3)]
    assert counts == [1, 2, 3]
    assert store.transaction(ledger.count_delivery, 'unknown') == 0


def _age(store, request_id, seconds):
    def update(session):
        session.execute(sa.update(models.Request).where(
            models.Request.id == request_id).values(
                updated_at=timeutils.utcnow() -
                datetime.timedelta(seconds=seconds)))
    store.transaction(update)


def test_only_open_requests_untouched_for_long_are_stale(store):
    ids = {}
    for name, age in [('old', 300), ('older', 600), ('fresh', 1),
                      ('done', 900), ('applied', 120)]:
        ids[name] = store.transaction(ledger.add, 'n', st.ABORT, 1).id
        if name == 'done':
            store.transaction(ledger.mark, ids[name], ledger.DONE)
        if name == 'applied':
            store.transaction(ledger.mark, ids[name], ledger.APPLIED)
        _age(store, ids[name], age)
    stale = store.transaction(ledger.stale, 60)
    assert [r.id for r in stale] == [ids['older'], ids['old'],
                                     ids['applied']]
    assert [r.id for r in store.transaction(ledger.stale, 60, 1)] == [
        ids['older']]


def test_a_touched_request_is_no_longer_stale(store):
    row = store.transaction(ledger.add, 'n', st.ABORT, 1)
    _age(store, row.id, 300)
    store.transaction(ledger.touch, [row.id])
    assert store.transaction(ledger.stale, 60) == []


# Lookup.

@pytest.fixture
def three_nodes(put_node):
    return [put_node(st.WAITING, macs=[MAC1, MAC2], bmcs=['10.0.0.1']),
            put_node(st.WAITING, macs=[MAC3], bmcs=['10.0.0.2']),
            put_node(st.WAITING, macs=[], bmcs=['10.0.0.1'])]


def test_the_highest_lookup_score_wins(store, three_nodes):
    first, second, third = three_nodes
    assert store.transaction(lookup.find, [MAC1], ['10.0.0.1']) == first
    assert store.transaction(lookup.find, [MAC3, 'aa:aa:aa:aa:aa:aa'],
                             []) == second
    assert store.transaction(lookup.find, [MAC1, MAC2, MAC3], []) == first


def test_a_lookup_tie_is_ambiguous(store, three_nodes):
    with pytest.raises(lookup.Ambiguous):
        store.transaction(lookup.find, [], ['10.0.0.1'])
    with pytest.raises(lookup.Ambiguous):
        store.transaction(lookup.find, [MAC1, MAC3], [])


def test_a_lookup_matching_nothing_raises_not_found(store, three_nodes):
    with pytest.raises(lookup.NotFound):
        store.transaction(lookup.find, ['aa:bb:cc:dd:ee:ff'], ['10.9.9.9'])
    with pytest.raises(lookup.NotFound):
        store.transaction(lookup.find, [], [])


def test_lookup_macs_are_matched_lower_cased(store, three_nodes):
    assert store.transaction(lookup.find, [MAC3.upper()], []) == \
        three_nodes[1]


def test_a_finished_node_is_not_found_any_more(store, put_node):
    uuid = put_node(st.PROCESSING, macs=[MAC1])
    store.transaction(nodes.transition, _node(store, uuid), st.FINISH,
                      st.FINISHED, ACTOR)
    with pytest.raises(lookup.NotFound):
        store.transaction(lookup.find, [MAC1], [])


# Schema.

def test_an_upgrade_twice_is_a_no_op(db_url, store, put_node):
    uuid = put_node(st.WAITING, macs=[MAC1])
    assert migration.current(db_url) == migration.head()
    migration.upgrade(db_url)
    assert migration.current(db_url) == migration.head()
    assert _node(store, uuid).state == 'waiting'
    assert _attributes(store, uuid) == [('mac', MAC1)]


def test_a_fresh_schema_has_every_table(db_url):
    engine = sa.create_engine(db_url)
    try:
        tables = set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert tables >= {'nodes', 'attributes', 'introspection_data',
                      'requests', 'transitions', 'alembic_version'}


def test_ending_an_attempt_closes_its_other_open_requests_but_reapply(
        store, put_node):
    uuid = put_node(st.WAITING)
    node = _node(store, uuid)

    def add(session, event, attempt):
        return ledger.add(session, uuid, event, attempt).id
    start = store.transaction(add, st.START, node.attempt)
    reapply = store.transaction(add, st.REAPPLY, node.attempt)
    older = store.transaction(add, st.ABORT, node.attempt - 1)
    timeout = store.transaction(add, st.TIMEOUT, node.attempt)
    store.transaction(nodes.transition, node, st.TIMEOUT, st.ERROR, ACTOR,
                      request_id=timeout, error='Introspection timeout')
    status = {r: store.transaction(ledger.get, r).status
              for r in (start, reapply, older, timeout)}
    assert status == {start: 'rejected', reapply: 'pending',
                      older: 'pending', timeout: 'pending'}


def test_a_self_loop_does_not_leave_the_state_nor_restart_its_clock(
        store, put_node):
    uuid = put_node(st.STARTING)
    time.sleep(0.2)
    assert store.transaction(nodes.transition, _node(store, uuid), st.START,
                             st.STARTING, ACTOR) is None
    stayed = store.transaction(nodes.transition, _node(store, uuid),
                               st.WAIT, st.WAITING, ACTOR)
    assert 0.2 <= stayed < 60


def test_the_entry_a_move_gives_times_the_next_one_as_the_history_would(
        store, put_node):
    uuid = put_node(st.STARTING)
    time.sleep(0.2)
    before = _node(store, uuid)
    loop = store.transaction(nodes.move, before, st.START, st.STARTING,
                             ACTOR)
    entered = nodes.entered(before, loop)
    assert entered == before.started_at
    on = store.transaction(nodes.move, loop.node, st.WAIT, st.WAITING,
                           ACTOR, entered_at=entered)
    assert 0.2 <= on.stayed < 60
    assert nodes.entered(loop.node, on) == on.at
    time.sleep(0.1)
    given = store.transaction(nodes.transition, on.node, st.PROCESS,
                              st.PROCESSING, ACTOR,
                              entered_at=nodes.entered(loop.node, on))
    read = store.transaction(nodes._entered_at, on.node)
    assert read == on.at and 0.1 <= given < 60


def _synchronous(store):
    """SQLite's ``synchronous`` on a connection of ``store``: 2 is FULL
    (every commit synced), 1 NORMAL (only WAL checkpoints)."""
    return store.transaction(
        lambda conn: conn.exec_driver_sql('PRAGMA synchronous').scalar())


def _store(url, stop, **options):
    policy = retry.RetryPolicy('database', 0, 0.05, stop, db_api.RETRYABLE)
    return db_api.Store(url, policy, **options)


def test_a_sqlite_store_syncs_every_commit_unless_told_not_to(store,
                                                              db_url, stop):
    assert _synchronous(store) == 2
    checkpointed = _store(db_url, stop, sqlite_synchronous=False)
    try:
        assert _synchronous(checkpointed) == 1
    finally:
        checkpointed.dispose()


def test_a_sqlite_database_out_of_wal_mode_syncs_every_commit(stop):
    in_memory = _store('sqlite://', stop, sqlite_synchronous=False)
    try:
        assert in_memory.transaction(lambda conn: conn.exec_driver_sql(
            'PRAGMA journal_mode').scalar()) == 'memory'
        assert _synchronous(in_memory) == 2
    finally:
        in_memory.dispose()


@pytest.mark.parametrize('value, expected', [(True, 2), (False, 1)])
def test_the_service_store_follows_the_sqlite_synchronous_option(
        service_conf, value, expected):
    service_conf.set_override('sqlite_synchronous', value, group='database')
    svc = service_mod.Service(service_conf)
    try:
        assert _synchronous(svc.store) == expected
    finally:
        svc.shutdown()
