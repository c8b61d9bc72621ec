"""The importer against real ironic-inspector 12.5 schemas (made by 12.5's
own ``ironic-inspector-dbsync upgrade``) on SQLite, PostgreSQL and
MariaDB, with rows in every upstream state written the way 12.5 leaves
them, including what its API cannot easily produce (a node interrupted
in ``processing``, stale lookup attributes, NULL columns)."""

import datetime
import json
import subprocess
import threading
import uuid as uuidlib

import pytest
import sqlalchemy as sa

import backends
import cluster as cluster_mod
from inspector_ha.common import retry
from inspector_ha.common import timeutils
from inspector_ha.db import api as db_api
from inspector_ha.db import migration
from inspector_ha.db import models
from inspector_ha.db import nodes as nodes_db
from inspector_ha.db import ledger
from inspector_ha.db import rules as rules_db
from inspector_ha.db import upstream_import
from inspector_ha.db import upstream_source
from inspector_ha.engine import periodic
import upstream

STATES = ('starting', 'waiting', 'processing', 'finished', 'error',
          'reapplying', 'enrolling', 'aborting')
UUIDS = {s: '00000000-0000-4000-8000-%012d' % i
         for i, s in enumerate(STATES)}
OTHER = 'ffffffff-0000-4000-8000-000000000001'
LONG_AGO = datetime.datetime(2026, 1, 2, 3, 4, 5)


def _source_url(kind, tmp_path, obtain):
    if kind == 'sqlite':
        return 'sqlite:///%s' % (tmp_path / 'ironic-inspector.sqlite')
    return obtain({'postgresql': backends.postgres_url,
                   'mariadb': backends.mariadb_url}[kind])


@pytest.fixture(params=['sqlite', 'postgresql', 'mariadb'])
def source(request, tmp_path, obtain_backend):
    url = _source_url(request.param, tmp_path, obtain_backend)
    server = upstream.Inspector(url, 'http://127.0.0.1:9')
    try:
        obtain_backend(server.dbsync)
        engine = sa.create_engine(url)
        yield url, engine
        engine.dispose()
    finally:
        server.close()
        if request.param != 'sqlite':
            backends.drop_database(url)


@pytest.fixture
def store(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'inspector-ha.sqlite')
    migration.upgrade(url)
    store = db_api.Store(url, retry.RetryPolicy(
        'database', 0, 0.0, threading.Event(), db_api.RETRYABLE))
    yield store
    store.dispose()


def _insert(engine, table, **row):
    columns = ', '.join(row)
    values = ', '.join(':%s' % k for k in row)
    with engine.begin() as conn:
        conn.execute(sa.text('INSERT INTO %s (%s) VALUES (%s)' % (
            table, columns, values)), row)


def _fill(engine):
    """One node per upstream state, each with (perhaps stale) lookup
    attributes; data for the finished one; two rules with NULLs."""
    for i, (state, uuid) in enumerate(UUIDS.items()):
        final = state in ('finished', 'error')
        _insert(engine, 'nodes', uuid=uuid, version_id='', state=state,
                started_at=LONG_AGO + datetime.timedelta(minutes=i),
                finished_at=LONG_AGO + datetime.timedelta(hours=1)
                if final else None,
                error='boom' if state == 'error' else None,
                manage_boot=None if i % 2 else False)
        for name, value in ([
                ('mac', '52:54:00:AA:00:%02x' % i),
                ('bmc_address', '192.0.2.%d' % (i + 1))]):
            _insert(engine, 'attributes', uuid=str(uuidlib.uuid4()),
                    node_uuid=uuid, name=name, value=value)
    for processed in (True, False):
        _insert(engine, 'introspection_data', uuid=UUIDS['finished'],
                processed=processed,
                data=json.dumps({'processed': processed, 'cpus': 4}))
    _insert(engine, 'rules', uuid='r1', description='first',
            created_at=LONG_AGO, disabled=None, scope=None)
    _insert(engine, 'rules', uuid='r2', description='second',
            created_at=LONG_AGO + datetime.timedelta(seconds=1),
            disabled=False, scope='rack1')
    for op, value in (('ge', 4), ('lt', 9)):
        _insert(engine, 'rule_conditions', rule='r1', op=op,
                multiple='any', invert=None, field='memory_mb',
                params=json.dumps({'value': value}))
    for name in ('CUSTOM_A', 'CUSTOM_B'):
        _insert(engine, 'rule_actions', rule='r1', action='add-trait',
                params=json.dumps({'name': name}))
    _insert(engine, 'rule_actions', rule='r2', action='fail',
            params=json.dumps({'message': 'no'}))


def _nodes(session):
    return {n.uuid: (n.state, n.error, n.started_at, n.finished_at,
                     n.manage_boot, n.attempt)
            for n in session.execute(sa.select(models.Node.__table__))}


def _attributes(session):
    return sorted((a.node_uuid, a.name, a.value)
                  for a in session.execute(
                      sa.select(models.Attribute.__table__)))


def _existing_target_node(session):
    """A node inspector-ha itself started, whose UUID upstream has too."""
    nodes_db.create(session, UUIDS['waiting'], True, 'api-0', None)
    nodes_db.create(session, OTHER, True, 'api-0', None)
    nodes_db.add_attributes(session, OTHER, 'mac', ['52:54:00:ff:ff:ff'])


def test_every_upstream_state_is_carried_and_the_targets_nodes_kept(
        source, store):
    url, engine = source
    _fill(engine)
    store.transaction(_existing_target_node)
    before = store.transaction(_nodes)
    report = upstream_import.run(url, store, data_expiry=86400)
    after = store.transaction(_nodes)
    assert after[OTHER] == before[OTHER]
    assert after[UUIDS['waiting']] == before[UUIDS['waiting']]
    assert after[UUIDS['finished']] == (
        'finished', None, LONG_AGO + datetime.timedelta(minutes=3),
        LONG_AGO + datetime.timedelta(hours=1), True, 1)
    assert after[UUIDS['error']][:2] == ('error', 'boom')
    assert after[UUIDS['error']][4] is False
    for state in ('starting', 'processing', 'reapplying', 'enrolling',
                  'aborting'):
        node = after[UUIDS[state]]
        assert node[:2] == ('error', upstream_import.INTERRUPTED % state)
        assert node[3] is not None
    assert store.transaction(_attributes) == [
        (OTHER, 'mac', '52:54:00:ff:ff:ff')]
    lines = '\n'.join(report.lines())
    assert 'nodes: imported 7 (error 6, finished 1); 5 interrupted, ' \
        'ended in error; 1 already present' in lines
    assert 'introspection_data: imported 2 (processed 1, unprocessed 1)' \
        in lines
    assert 'WARNING: 2 nodes finished more than [periodic] data_expiry' \
        in lines


def test_a_waiting_node_keeps_its_lookup_and_times_out_from_its_start(
        source, store):
    url, engine = source
    _fill(engine)
    upstream_import.run(url, store)
    waiting = UUIDS['waiting']
    assert store.transaction(_attributes) == [
        (waiting, 'bmc_address', '192.0.2.2'),
        (waiting, 'mac', '52:54:00:aa:00:01')]
    starts = store.transaction(ledger.for_node, waiting)
    assert [(r.event, r.attempt, r.status) for r in starts] == [
        ('start', 1, 'done')]
    history = store.transaction(nodes_db.history, waiting)
    assert [(t.event, t.to_state) for t in history] == [('import',
                                                         'waiting')]
    timeout = (timeutils.utcnow() - LONG_AGO).total_seconds() - 3600
    timeouts = store.transaction(periodic._add_timeouts, lambda s: None,
                                 timeout)
    assert [(r.node_uuid, r.event) for r in timeouts] == [
        (waiting, 'timeout')]


def test_rules_keep_their_order_and_nulls_become_defaults(source, store):
    url, engine = source
    _fill(engine)
    upstream_import.run(url, store)
    rules = store.transaction(rules_db.list_all)
    assert [r['uuid'] for r in rules] == ['r1', 'r2']
    assert rules[0]['conditions'] == [
        {'op': 'ge', 'field': 'memory_mb', 'multiple': 'any',
         'invert': False, 'value': 4},
        {'op': 'lt', 'field': 'memory_mb', 'multiple': 'any',
         'invert': False, 'value': 9}]
    assert rules[0]['actions'] == [{'action': 'add-trait', 'name': n}
                                   for n in ('CUSTOM_A', 'CUSTOM_B')]
    assert (rules[1]['scope'], rules[1]['actions']) == (
        'rack1', [{'action': 'fail', 'message': 'no'}])


def test_a_source_at_another_revision_is_refused_naming_it(source, store):
    url, engine = source
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = "
                             "'18440d0834af'"))
    with pytest.raises(upstream_source.WrongSource,
                       match='revision 18440d0834af.*b55109d5063a'):
        upstream_import.run(url, store)
    assert store.transaction(_nodes) == {}


def test_swift_data_is_reported_with_the_step_to_run_first(source, store):
    url, engine = source
    with pytest.raises(upstream_import.SwiftSource,
                       match='ironic-inspector-migrate-data --from swift '
                             '--to database'):
        upstream_import.run(url, store, source_store_data='swift')
    _insert(engine, 'nodes', uuid=UUIDS['finished'], version_id='',
            state='finished', started_at=LONG_AGO, finished_at=LONG_AGO,
            manage_boot=True)
    report = upstream_import.run(url, store, dry_run=True)
    assert any('no stored introspection data' in line and
               'ironic-inspector-migrate-data' in line
               for line in report.lines())
    assert store.transaction(_nodes) == {}


def test_inspector_ha_dbsync_upgrade_refuses_a_12_5_database_naming_the_import(
        tmp_path, obtain_backend):
    url = 'sqlite:///%s' % (tmp_path / 'ironic-inspector.sqlite')
    server = upstream.Inspector(url, 'http://127.0.0.1:9')
    try:
        obtain_backend(server.dbsync)
    finally:
        server.close()
    conf = tmp_path / 'inspector-ha.conf'
    conf.write_text('[database]\nconnection = %s\n' % url)
    proc = subprocess.run([cluster_mod.BIN / 'inspector-ha-dbsync',
                           '--config-file', str(conf), 'upgrade'],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'is an ironic-inspector 12.5 database (revision b55109d5063a)' \
        in proc.stdout and 'import-ironic-inspector --source' in proc.stdout
    conf.write_text('[database]\nconnection = sqlite:///%s\n' % (
        tmp_path / 'target.sqlite'))
    missing = subprocess.run(
        [cluster_mod.BIN / 'inspector-ha-dbsync', '--config-file', str(conf),
         'import-ironic-inspector', '--source',
         'sqlite:///%s' % (tmp_path / 'typo.sqlite')],
        capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1
    assert 'ERROR: No SQLite database file' in missing.stdout
    assert not (tmp_path / 'typo.sqlite').exists()
    old_conf = tmp_path / 'ironic-inspector.conf'
    old_conf.write_text('[processing]\nstore_data = swift\n')
    swift = subprocess.run(
        [cluster_mod.BIN / 'inspector-ha-dbsync', '--config-file', str(conf),
         'import-ironic-inspector', '--source', url, '--source-config',
         str(old_conf)], capture_output=True, text=True, timeout=120)
    assert swift.returncode == 1
    assert 'ironic-inspector-migrate-data --from swift --to database' in \
        swift.stdout


def test_rules_created_in_the_same_second_keep_12_5s_order(source, store):
    url, engine = source
    for uuid in ('b-created-first', 'a-created-second'):
        _insert(engine, 'rules', uuid=uuid, description=uuid,
                created_at=LONG_AGO, disabled=False, scope=None)
        _insert(engine, 'rule_conditions', rule=uuid, op='eq',
                multiple='any', invert=False, field='cpus',
                params=json.dumps({'value': 1}))
        _insert(engine, 'rule_actions', rule=uuid, action='add-trait',
                params=json.dumps({'name': 'CUSTOM_X'}))
    upstream_import.run(url, store)
    assert [r['uuid'] for r in store.transaction(rules_db.list_all)] == [
        'b-created-first', 'a-created-second']
