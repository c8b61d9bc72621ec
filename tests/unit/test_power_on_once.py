"""A side effect of an attempt (the power-on) is claimed once in SQL, and
only by the delivery whose write is the node's latest: a start redelivered
after its worker died mid-task finds the claim, and a delivery that wakes
up after another took over finds itself stale."""

import pytest
import sqlalchemy as sa

from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.engine import tasks
from inspector_ha.fsm import states as st


def _node(store, uuid):
    return store.transaction(nodes.get, uuid)


def _claim(store, node):
    return store.transaction(ledger.claim_once, node, tasks.POWER_ON)


def _start_again(session, node):
    """What a redelivery of the start request commits first."""
    nodes.transition(session, node, st.START, st.STARTING, 'redelivery')


def test_a_power_on_is_claimed_once_per_attempt(store, put_node):
    node = _node(store, put_node(st.STARTING))
    assert _claim(store, node) == ledger.CLAIMED
    assert _claim(store, node) == ledger.TAKEN


def test_a_delivery_that_woke_up_after_a_takeover_is_stale(store,
                                                           put_node):
    uuid = put_node(st.STARTING)
    frozen = _node(store, uuid)
    store.transaction(_start_again, frozen)
    assert _claim(store, frozen) == ledger.STALE
    assert _claim(store, _node(store, uuid)) == ledger.CLAIMED


def test_a_claim_is_a_closed_ledger_row_never_redriven(store, put_node):
    uuid = put_node(st.STARTING)
    _claim(store, _node(store, uuid))
    rows = store.transaction(ledger.for_node, uuid)
    assert [(r.event, r.status) for r in rows] == [('power-on', 'done')]
    assert store.transaction(ledger.stale, -60) == []


def test_a_claim_racing_another_loses_on_the_derived_id(store, put_node):
    uuid = put_node(st.STARTING)
    _claim(store, _node(store, uuid))
    claim_id = next(r.id for r in store.transaction(ledger.for_node, uuid))

    def insert_again(session):
        # NOTE: what the loser of a race does: it read no claim, inserts.
        ledger.add(session, uuid, tasks.POWER_ON, 1, request_id=claim_id)
    with pytest.raises(sa.exc.IntegrityError):
        store.transaction(insert_again)
