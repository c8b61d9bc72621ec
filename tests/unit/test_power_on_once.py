"""A side effect of an attempt (the power-on) is claimed once in SQL, and
only by the delivery whose write is the node's latest: a start redelivered
after its worker died mid-task finds the claim, and a delivery that wakes
up after another took over finds itself stale. A claim is good for a
window: a worker frozen between its claim and its Ironic call sends
nothing once another took the power-on over, and the take-over waits the
earlier claim's window out before it asks Ironic (D3c)."""

import datetime
import threading
import types

import pytest
import sqlalchemy as sa

from inspector_ha.common import timeutils
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.engine import claims as claims_mod
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


class _Clock:
    """A monotonic clock and a wall clock a test moves: a freeze of the
    process is time passing between two of its steps."""

    def __init__(self):
        self.now = 100.0
        # NOTE: the claims' rows are stamped by the real wall clock.
        self.wall = timeutils.utcnow()

    def __call__(self):
        return self.now

    def utc(self):
        return self.wall + datetime.timedelta(seconds=self.now - 100.0)

    def freeze(self, seconds):
        self.now += seconds


class _Ironic:
    """What the power calls reach: each sent call, its fence checked as
    the facade checks it, just before sending."""

    def __init__(self, power_state='power off'):
        self.sent = []
        self.power_state = power_state

    def reboot(self, uuid, fence=None):
        fence()
        self.sent.append(('reboot', uuid))
        self.power_state = 'power on'

    def get_node(self, uuid, fields=None):
        return types.SimpleNamespace(power_state=self.power_state,
                                     target_power_state=None)


def _claims(store, clock, stop=None):
    return claims_mod.Claims(store=store, window=2.0,
                             stop=stop or threading.Event(), clock=clock,
                             wall=clock.utc)


def _tasks(store, clock, ironic, stop=None):
    return tasks.Tasks(ironic=ironic, store=store, announce=None,
                       throttle=None, pipeline=None, data_store=None,
                       conf=None, claims=_claims(store, clock, stop))


def _claim_then_take_over(store, uuid, clock, ironic, frozen_for,
                          stop=None):
    """A first delivery claims the power-on of starting node ``uuid``;
    after ``frozen_for`` seconds a redelivery writes the node and powers
    it on if it should. The first delivery's claim."""
    first = _node(store, uuid)
    outcome, claim = _claims(store, clock).claim(first, tasks.POWER_ON)
    assert outcome == ledger.CLAIMED
    clock.freeze(frozen_for)
    store.transaction(_start_again, first)
    _tasks(store, clock, ironic, stop)._power_on_once(_node(store, uuid))
    return claim


def _waits(waited):
    """A stop event whose waits are recorded, and never stop."""
    stop = threading.Event()
    stop.wait = lambda seconds: waited.append(seconds) or False
    return stop


def test_a_worker_frozen_after_its_claim_sends_no_power_on_when_it_wakes(
        store, put_node):
    clock, ironic = _Clock(), _Ironic()
    uuid = put_node(st.STARTING)
    # Frozen for a minute: another worker takes the start over, finds the
    # claim and powers the node on.
    claim = _claim_then_take_over(store, uuid, clock, ironic, 60)
    assert ironic.sent == [('reboot', uuid)]
    # The frozen one wakes up just before its call.
    ironic.power_state = 'power off'
    with pytest.raises(claims_mod.Lost):
        claim.check()
    assert ironic.sent == [('reboot', uuid)]


def test_a_take_over_waits_out_the_earlier_claims_window_first(
        store, put_node):
    clock, ironic, waited = _Clock(), _Ironic(), []
    uuid = put_node(st.STARTING)
    _claim_then_take_over(store, uuid, clock, ironic, 0.5, _waits(waited))
    assert waited == [pytest.approx(2.0 + claims_mod.MARGIN - 0.5, abs=0.1)]
    assert ironic.sent == [('reboot', uuid)]


def test_an_old_claim_is_not_waited_for_and_a_powered_node_not_rebooted(
        store, put_node):
    clock, ironic, waited = _Clock(), _Ironic(power_state='power on'), []
    uuid = put_node(st.STARTING)
    _claim_then_take_over(store, uuid, clock, ironic, 30, _waits(waited))
    assert waited == []
    assert ironic.sent == []


def test_a_claim_past_its_window_is_stamped_again_while_it_is_the_latest(
        store, put_node):
    clock = _Clock()
    node = _node(store, put_node(st.STARTING))
    _, claim = _claims(store, clock).claim(node, tasks.POWER_ON)
    clock.freeze(5)
    claim.check()
    assert claim.deadline == pytest.approx(clock.now + 2.0)
    clock.freeze(5)
    claim.check()
