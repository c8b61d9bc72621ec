"""Retry policies (``common/retry.py``) and the store's use of them."""

import sqlite3
import threading
import time

import pytest
import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha.db import models


class Flaky:
    """Fails ``failures`` times with ``exc``, then returns 'ok'."""

    def __init__(self, failures, exc=ConnectionError('gone')):
        self.calls = 0
        self.failed = threading.Event()
        self._failures = failures
        self._exc = exc

    def __call__(self):
        self.calls += 1
        if self.calls <= self._failures:
            self.failed.set()
            raise self._exc
        return 'ok'


def _policy(stop, count=3, timeout=0.01, **kwargs):
    return retry.RetryPolicy('thing', count, timeout, stop,
                             (ConnectionError,), **kwargs)


def test_a_call_is_retried_count_times_then_the_backend_is_unavailable(
        stop):
    func = Flaky(failures=100)
    with pytest.raises(retry.BackendUnavailable) as info:
        _policy(stop, count=3).call(func)
    assert func.calls == 4
    assert info.value.backend == 'thing'
    assert isinstance(info.value.cause, ConnectionError)
    assert 'thing unavailable' in str(info.value)


def test_a_count_of_zero_means_a_single_attempt(stop):
    func = Flaky(failures=1)
    with pytest.raises(retry.BackendUnavailable):
        _policy(stop, count=0).call(func)
    assert func.calls == 1


def test_a_call_that_recovers_within_the_budget_returns_its_value(stop):
    func = Flaky(failures=3)
    assert _policy(stop, count=3).call(func) == 'ok'
    assert func.calls == 4


def test_an_error_not_worth_retrying_is_raised_at_once(stop):
    func = Flaky(failures=5, exc=KeyError('bad request'))
    with pytest.raises(KeyError):
        _policy(stop).call(func)
    assert func.calls == 1


def test_an_error_refused_by_retry_if_is_raised_at_once(stop):
    func = Flaky(failures=5)
    with pytest.raises(ConnectionError):
        _policy(stop, retry_if=lambda exc: False).call(func)
    assert func.calls == 1


def test_a_stop_set_during_the_pause_interrupts_it_at_once(stop):
    func = Flaky(failures=100)
    policy = _policy(stop, count=5, timeout=60.0)

    def stop_after_first_failure():
        if func.failed.wait(timeout=10):
            stop.set()

    setter = threading.Thread(target=stop_after_first_failure)
    setter.start()
    began = time.monotonic()
    with pytest.raises(retry.Interrupted):
        policy.call(func)
    elapsed = time.monotonic() - began
    setter.join(timeout=10)
    assert elapsed < 5.0, 'the 60 s pause was not interrupted'
    assert func.calls == 1


def test_a_stop_already_set_interrupts_the_first_pause(stop):
    stop.set()
    func = Flaky(failures=100)
    began = time.monotonic()
    with pytest.raises(retry.Interrupted):
        _policy(stop, count=5, timeout=60.0).call(func)
    assert time.monotonic() - began < 5.0
    assert func.calls == 1


def test_an_unreachable_database_is_retried_then_unavailable(tmp_path,
                                                             stop):
    url = 'sqlite:///%s' % (tmp_path / 'missing' / 'dir' / 'db.sqlite')
    policy = retry.RetryPolicy('database', 2, 0.01, stop, db_api.RETRYABLE)
    store = db_api.Store(url, policy)
    connects = []
    sa.event.listen(store.engine, 'do_connect',
                    lambda *args: connects.append(1))

    def read(conn):
        return conn.execute(sa.text('SELECT 1')).scalar()

    try:
        with pytest.raises(retry.BackendUnavailable) as info:
            store.transaction(read)
    finally:
        store.dispose()
    assert info.value.backend == 'database'
    assert isinstance(info.value.cause, sa.exc.OperationalError)
    assert connects == [1, 1, 1]


def test_a_transaction_is_rolled_back_and_retried_whole(store):
    attempts = []

    def write(session):
        attempts.append(1)
        session.execute(sa.insert(models.Request).values(
            id='r%d' % len(attempts), node_uuid='n', event='abort',
            status='pending', deliveries=0,
            created_at=sa.func.now(), updated_at=sa.func.now()))
        if len(attempts) == 1:
            raise sa.exc.OperationalError('INSERT', {}, Exception('gone'))
        return len(attempts)

    assert store.transaction(write) == 2

    def ids(session):
        return list(session.scalars(sa.select(models.Request.id)))

    assert store.transaction(ids) == ['r2']


def test_an_error_outside_the_retryable_ones_is_not_retried(store):
    attempts = []

    def fail(session):
        attempts.append(1)
        raise ValueError('a bug')

    with pytest.raises(ValueError):
        store.transaction(fail)
    assert attempts == [1]


def test_a_write_lock_busy_past_the_timeout_is_retried_then_unavailable(
        tmp_path, stop, caplog):
    path = tmp_path / 'db.sqlite'
    policy = retry.RetryPolicy('database', 2, 0.01, stop, db_api.RETRYABLE)
    store = db_api.Store('sqlite:///%s' % path, policy)
    sa.event.listen(store.engine, 'connect', lambda dbapi_conn, _record:
                    dbapi_conn.execute('PRAGMA busy_timeout = 50'))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute('BEGIN IMMEDIATE')
    try:
        with pytest.raises(retry.BackendUnavailable) as info:
            store.transaction(lambda conn: conn.execute(
                sa.text('SELECT 1')).scalar())
    finally:
        holder.close()
        store.dispose()
    assert isinstance(info.value.cause, sa.exc.OperationalError)
    assert 'locked' in str(info.value.cause)
    assert len([r for r in caplog.records
                if 'database call failed' in r.getMessage()]) == 2
