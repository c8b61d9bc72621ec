"""The store keeps its connections open between transactions
(inspector_ha.db.kept), here on a SQLite file; on PostgreSQL and
MariaDB: tests/functional/test_kept_server_connections.py."""

import sqlite3
import threading
import types

import pytest
import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha.db import kept as kept_mod


class _Failed(Exception):
    pass


def _driver(conn):
    """The sqlite3 connection under ``conn``."""
    return conn.connection.driver_connection


def _fail(conn):
    conn.exec_driver_sql("UPDATE nodes SET state = 'error'")
    raise _Failed()


@pytest.fixture
def kept_on(db_url):
    """``kept_on(max_idle[, max_age])``: a KeptConnections of a file's
    engine pooling nothing, as the store builds it."""
    engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
    yield lambda *args: kept_mod.KeptConnections(engine, *args)
    engine.dispose()


def _connection(conn):
    return conn


def _one_idle_one_busy(kept):
    """Two connections taken from ``kept``, the first given back."""
    idle, busy = kept.take(), kept.take()
    kept.give_back(idle)
    return idle, busy


def test_a_sqlite_file_store_runs_the_next_transaction_on_the_same_connection(
        store):
    first = store.transaction(_connection)
    assert store.transaction(_connection) is first


def test_a_transaction_that_raised_an_error_of_its_own_keeps_its_connection(
        store):
    first = store.transaction(_connection)
    with pytest.raises(_Failed):
        store.transaction(_fail)
    assert store.transaction(_connection) is first


def test_a_transaction_the_database_failed_closes_its_connection(store):
    failed = {}

    def fail_in_the_database(conn):
        failed['connection'] = conn
        failed['driver'] = _driver(conn)
        conn.exec_driver_sql('SELECT ?', ())

    with pytest.raises(sa.exc.ProgrammingError):
        store.transaction(fail_in_the_database)
    assert store.transaction(_connection) is not failed['connection']
    with pytest.raises(sqlite3.ProgrammingError, match='closed'):
        failed['driver'].execute('SELECT 1')


def test_a_transaction_that_broke_a_constraint_keeps_its_connection(store):
    first = store.transaction(_connection)
    with pytest.raises(sa.exc.IntegrityError):
        store.transaction(lambda conn: conn.exec_driver_sql(
            "INSERT INTO nodes (uuid) VALUES ('x')"))
    assert store.transaction(_connection) is first


def test_an_interrupted_transaction_closes_its_connection(store):
    taken = {}

    def interrupted(conn):
        taken['connection'] = conn
        raise KeyboardInterrupt()

    with pytest.raises(KeyboardInterrupt):
        store.transaction(interrupted)
    assert taken['connection'].closed


def test_what_a_transaction_that_raised_wrote_is_rolled_back(store,
                                                             put_node):
    uuid = put_node('waiting')
    with pytest.raises(_Failed):
        store.transaction(_fail)
    assert store.transaction(lambda conn: conn.exec_driver_sql(
        'SELECT state FROM nodes WHERE uuid = ?', (uuid,)).scalar()) == \
        'waiting'


def test_no_more_connections_are_kept_idle_than_asked_the_last_given_first(
        kept_on):
    kept = kept_on(2)
    taken = [kept.take() for _ in range(3)]
    for connection in taken:
        kept.give_back(connection)
    assert [c.closed for c in taken] == [False, False, True]
    assert kept.take() is taken[1]


def test_zero_keeps_every_connection_given_back(kept_on):
    kept = kept_on(0)
    taken = [kept.take() for _ in range(12)]
    for connection in taken:
        kept.give_back(connection)
    assert not any(c.closed for c in taken)


def test_an_invalidated_connection_given_back_is_closed_not_kept(kept_on):
    kept = kept_on(0)
    connection = kept.take()
    connection.invalidate()
    kept.give_back(connection)
    assert connection.closed
    assert kept.take() is not connection


def test_a_connection_given_back_in_a_transaction_is_closed_not_kept(
        kept_on):
    kept = kept_on(0)
    connection = kept.take()
    connection.begin()
    kept.give_back(connection)
    assert connection.closed


def test_closing_closes_the_idle_connections_and_those_given_back_later(
        kept_on):
    kept = kept_on(0)
    idle, busy = _one_idle_one_busy(kept)
    kept.close()
    assert idle.closed and not busy.closed
    kept.give_back(busy)
    assert busy.closed


def test_a_connection_older_than_the_age_asked_is_closed_as_it_is_taken(
        kept_on, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(kept_mod, 'time',
                        types.SimpleNamespace(monotonic=lambda: clock[0]))
    kept = kept_on(0, 60.0)
    old = kept.take()
    kept.give_back(old)
    clock[0] += 61.0
    young = kept.take()
    assert old.closed and young is not old
    kept.give_back(young)
    assert kept.take() is young


def test_no_more_than_twice_the_idle_connections_are_open_at_once(kept_on):
    kept = kept_on(1, 3600.0, 0.1)
    taken = [kept.take(), kept.take()]
    with pytest.raises(sa.exc.TimeoutError, match='no database connection'):
        kept.take()
    kept.give_back(taken[0])
    kept.give_back(taken[1])
    assert taken[1].closed
    assert kept.take() is taken[0]
    assert not kept.take().closed


def test_after_a_lost_connection_those_opened_before_are_not_used_again(
        kept_on):
    kept = kept_on(0)
    idle, busy = _one_idle_one_busy(kept)
    kept.lost()
    new = kept.take()
    assert idle.closed and new is not idle and new is not busy
    kept.give_back(busy)
    assert busy.closed
    kept.give_back(new)
    assert kept.take() is new


def test_a_health_ping_does_not_wait_for_a_writer(store, db_url):
    store.transaction(_connection)
    writer = sqlite3.connect(db_url.split('///', 1)[1], isolation_level=None)
    writer.execute('BEGIN IMMEDIATE')
    try:
        pinged = []
        pinging = threading.Thread(
            target=lambda: pinged.append(store.ping() or 'answered'))
        pinging.start()
        pinging.join(5)
        assert pinged == ['answered']
    finally:
        writer.execute('ROLLBACK')
        writer.close()


def test_threads_share_the_kept_connections_and_lose_no_write(store):
    store.transaction(lambda conn: conn.exec_driver_sql(
        'CREATE TABLE counter (n INTEGER NOT NULL)'))
    store.transaction(lambda conn: conn.exec_driver_sql(
        'INSERT INTO counter VALUES (0)'))

    def add_one(conn):
        n = conn.exec_driver_sql('SELECT n FROM counter').scalar()
        conn.exec_driver_sql('UPDATE counter SET n = ?', (n + 1,))

    def work():
        for _ in range(25):
            store.transaction(add_one)

    opened = []
    sa.event.listen(store.engine, 'connect', lambda *_: opened.append(1))
    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert store.transaction(lambda conn: conn.exec_driver_sql(
        'SELECT n FROM counter').scalar()) == 200
    # NOTE: one was open before; a connection per thread would open 8.
    assert len(opened) <= 7


def test_a_sqlite_database_in_memory_keeps_its_data_between_transactions(
        stop):
    policy = retry.RetryPolicy('database', 0, 0.05, stop, db_api.RETRYABLE)
    in_memory = db_api.Store('sqlite://', policy)
    try:
        in_memory.transaction(lambda conn: conn.exec_driver_sql(
            'CREATE TABLE t (n INTEGER)'))
        in_memory.transaction(lambda conn: conn.exec_driver_sql(
            'INSERT INTO t VALUES (1)'))
        assert in_memory.transaction(lambda conn: conn.exec_driver_sql(
            'SELECT n FROM t').scalar()) == 1
    finally:
        in_memory.dispose()
