"""The one-statement writes of ``inspector_ha/db/dialects.py`` on every
database the service runs on: SQLite, PostgreSQL and MariaDB, each on
the service's own schema."""

import threading

import pytest

from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha.db import data_store
from inspector_ha.db import ledger
from inspector_ha.db import nodes
from inspector_ha.fsm import states as st


@pytest.fixture
def store(schema_url):
    policy = retry.RetryPolicy('database', 0, 1.0, threading.Event(),
                               db_api.RETRYABLE)
    store = db_api.Store(schema_url, policy)
    yield store
    store.dispose()


def _started(store, uuid):
    store.transaction(nodes.create, uuid, True, 'test', None)


def test_a_once_row_is_added_by_the_first_add_only(store):
    uuid = '2d0c3a6e-0000-4000-8000-000000000001'
    _started(store, uuid)
    first = store.transaction(ledger.add_once, uuid, st.TIMEOUT, 1,
                              payload={'n': 1}, status=ledger.DONE)
    again = store.transaction(ledger.add_once, uuid, st.TIMEOUT, 1,
                              payload={'n': 2})
    assert first is not None and again is None
    row = store.transaction(ledger.get, first.id)
    assert (row.status, ledger.payload(row)) == (ledger.DONE, {'n': 1})


def test_a_claim_is_claimed_once_then_taken(store):
    uuid = '2d0c3a6e-0000-4000-8000-000000000002'
    _started(store, uuid)
    node = store.transaction(nodes.get, uuid)
    assert store.transaction(ledger.claim_once, node, 'power-on') == \
        ledger.CLAIMED
    assert store.transaction(ledger.claim_once, node, 'power-on') == \
        ledger.TAKEN


def test_a_claim_taken_over_is_restamped_and_its_old_stamp_refused(store):
    uuid = '2d0c3a6e-0000-4000-8000-000000000004'
    _started(store, uuid)
    node = store.transaction(nodes.get, uuid)
    first = store.transaction(ledger.claim, node, 'power-on')
    assert (first.outcome, first.stamp) == (ledger.CLAIMED, 0)
    again = store.transaction(ledger.claim, node, 'power-on')
    assert (again.outcome, again.stamp) == (ledger.TAKEN, 1)
    assert again.previous is not None
    assert store.transaction(ledger.renew_claim, node, 'power-on', 0) is None
    assert store.transaction(ledger.renew_claim, node, 'power-on', 1) == 2


def test_saved_data_replaces_the_earlier_data_of_its_kind_only(store):
    uuid = '2d0c3a6e-0000-4000-8000-000000000003'
    _started(store, uuid)
    kept = data_store.DatabaseStore()
    store.transaction(kept.save, uuid, {'raw': 1}, False)
    store.transaction(kept.save, uuid, {'done': 1}, True)
    store.transaction(kept.save, uuid, {'raw': 2, 'big': 'x' * 70000},
                      False)
    assert store.transaction(kept.get, uuid, False)['raw'] == 2
    assert store.transaction(kept.get, uuid, True) == {'done': 1}


def test_each_delivery_counted_gives_the_new_count(store):
    uuid = '2d0c3a6e-0000-4000-8000-000000000004'
    _started(store, uuid)
    request = store.transaction(ledger.add, uuid, st.START, 1)
    counts = [store.transaction(ledger.count_delivery, request.id)
              for _ in range(3)]
    assert counts == [1, 2, 3]


@pytest.mark.parametrize('scheme', ['mysql+pymysql', 'mariadb+pymysql'])
def test_mariadb_aborts_idle_transactions_whichever_way_the_url_names_it(
        mariadb_url, scheme):
    url = scheme + '://' + mariadb_url.split('://', 1)[1]
    policy = retry.RetryPolicy('database', 0, 1.0, threading.Event(),
                               db_api.RETRYABLE)
    store = db_api.Store(url, policy, idle_timeout=7)
    try:
        timeout = store.transaction(lambda conn: conn.exec_driver_sql(
            'SELECT @@SESSION.idle_transaction_timeout').scalar())
    finally:
        store.dispose()
    assert timeout == 7
