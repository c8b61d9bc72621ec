"""The store keeps its connections to PostgreSQL and MariaDB open between
transactions (SQLAlchemy's pool, sized by [database]), and after the
server cut them retries a transaction once, on a new connection."""

import threading

import pytest
import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.db import api as db_api

#: The server's id of the session a statement runs in.
_SESSION_ID = {'postgresql': 'SELECT pg_backend_pid()',
               'mysql': 'SELECT CONNECTION_ID()'}


@pytest.fixture(params=['pg_url', 'mariadb_url'])
def server_url(request):
    return request.getfixturevalue(request.param)


@pytest.fixture
def store(server_url):
    """A store that retries a transaction once."""
    store = db_api.Store(server_url, retry.RetryPolicy(
        'database', 1, 0.05, threading.Event(), db_api.RETRYABLE))
    yield store
    store.dispose()


def _session_id(conn):
    return conn.exec_driver_sql(_SESSION_ID[conn.dialect.name]).scalar()


def _sessions_at_once(store, count):
    """The server's ids of ``count`` transactions run at once (so each on
    a connection of its own, all kept after)."""
    barrier = threading.Barrier(count, timeout=30)
    seen = []

    def held(conn):
        seen.append(_session_id(conn))
        barrier.wait()

    threads = [threading.Thread(target=store.transaction, args=(held,))
               for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return set(seen)


def _cut(url, sessions):
    """End ``sessions`` from a connection of the server's own."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            for session in sessions:
                if conn.dialect.name == 'postgresql':
                    conn.exec_driver_sql(
                        'SELECT pg_terminate_backend(%d)' % session)
                else:
                    conn.exec_driver_sql('KILL %d' % session)
    finally:
        engine.dispose()


def test_the_store_runs_the_next_transaction_in_the_same_server_session(
        store):
    first = store.transaction(_session_id)
    assert [store.transaction(_session_id) for _ in range(5)] == [first] * 5


def test_a_transaction_after_the_server_cut_every_kept_connection_succeeds_on_its_one_retry(  # noqa: E501
        store, server_url):
    kept = _sessions_at_once(store, 3)
    assert len(kept) == 3
    _cut(server_url, kept)
    # NOTE: the first attempt finds its connection cut; the retry would
    # take the next dead one, and fail, if the store kept using them.
    after = store.transaction(_session_id)
    assert after not in kept
    assert _sessions_at_once(store, 3).isdisjoint(kept)


def test_the_store_keeps_no_more_connections_than_its_pool_size(
        server_url):
    store = db_api.Store(server_url, retry.RetryPolicy(
        'database', 0, 0.05, threading.Event(), db_api.RETRYABLE),
        pool=db_api.Pool(size=2))
    try:
        first = _sessions_at_once(store, 4)
        second = _sessions_at_once(store, 4)
    finally:
        store.dispose()
    assert len(first & second) == 2


def test_the_kept_sessions_abort_transactions_left_idle(server_url):
    """[database] idle_transaction_timeout reaches every connection the
    store opens (doc/guarantees.md E4)."""
    store = db_api.Store(server_url, retry.RetryPolicy(
        'database', 0, 0.05, threading.Event(), db_api.RETRYABLE),
        idle_timeout=3)
    try:
        setting = store.transaction(lambda conn: conn.exec_driver_sql(
            'SHOW idle_in_transaction_session_timeout'
            if conn.dialect.name == 'postgresql' else
            'SELECT @@idle_transaction_timeout').scalar())
    finally:
        store.dispose()
    assert setting in ('3s', 3)


def test_a_health_ping_uses_a_kept_connection(store):
    opened = []
    sa.event.listen(store.engine, 'connect', lambda *_: opened.append(1))
    store.transaction(_session_id)
    store.ping()
    store.ping()
    assert len(opened) == 1
