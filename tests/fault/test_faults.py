"""Each fault injected mid-batch into a cluster of 2 API processes behind
HAProxy and 3 workers on a private RabbitMQ, Redis and MariaDB, with a real
Ironic and simulated ramdisks; the history checker (``history.py``) then
finds no violation. Recovery times are printed as ``FAULT {json}``."""

import functools
import os

import pytest

import faults
import history

#: How long the worker is frozen: 30 s in CI (a take-over that waited
#: for the broker would take 120 s or more); the long form is 150 s.
FROZEN_SECONDS = float(os.environ.get('INSPECTOR_HA_FROZEN_SECONDS', 30))
#: The bound of doc/guarantees.md D3c: the lease (2 s) plus margin.
TAKEN_OVER_WITHIN = 10.0
#: doc/guarantees.md E2: a new leader within 3 s of a leader's freeze.
LEADER_WITHIN = 3.0
QUORUM = {'oslo_messaging_rabbit': {'rabbit_quorum_queue': 'true'}}


def _coordination(request, name):
    """The tooz URL of ``name`` (None: the harness's private Redis)."""
    if name == 'redis':
        return None
    if name == 'zookeeper':
        return request.getfixturevalue('zookeeper').url
    return request.getfixturevalue(name)


def _run(make_harness, inject, allowed_errors=(), **kwargs):
    """No introspection may end in error because of a fault (a deja vu,
    a dead letter, a timeout): each counts as lost."""
    silent = kwargs.pop('silent', False)
    harness = make_harness(**kwargs)
    driver, fault = harness.run_batch(inject, silent=silent)
    violations = history.conclude(harness, driver, fault, allowed_errors)
    assert not violations, '\n'.join(violations)
    return harness, fault


def test_a_worker_killed_mid_batch_loses_no_request(make_harness):
    _run(make_harness, faults.kill_worker)


def test_an_api_process_killed_mid_batch_loses_no_accepted_request(
        make_harness):
    _run(make_harness, faults.kill_api)


def test_a_killed_periodic_leader_is_replaced_and_epochs_only_grow(
        make_harness):
    _run(make_harness, faults.kill_leader)


def test_a_worker_paused_past_its_lock_is_fenced_when_it_wakes_up(
        make_harness):
    harness, fault = _run(make_harness, faults.pause_worker)
    stale = [a for a in harness.history.attempts
             if a['actor'].startswith(fault.notes['member']) and
             a['outcome'] == 'stale']
    if fault.notes['held']:
        assert stale, 'the woken worker wrote nothing stale'


@pytest.mark.parametrize('coordination,database', [
    ('redis', None), ('zookeeper', 'pg_url'), ('etcd_url', None)])
def test_a_worker_frozen_mid_batch_is_taken_over_in_seconds_by_default(
        request, make_harness, coordination, database):
    """Every option at its default (the AMQP heartbeat's 60 s, the
    outbox's re-drive after 60 s) but quorum queues: the frozen worker's
    requests move on once its coordination lease (2 s) lapses, not once
    RabbitMQ drops its connection (2 to 3 heartbeats); it wakes up
    fenced. Each coordination backend, on MariaDB and PostgreSQL."""
    harness, fault = _run(
        make_harness, functools.partial(
            faults.pause_worker, seconds=FROZEN_SECONDS), defaults=True,
        conf=QUORUM, coordination=_coordination(request, coordination),
        database=database and request.getfixturevalue(database))
    assert fault.notes['held'], 'the frozen worker held no request'
    assert fault.recovery_s <= TAKEN_OVER_WITHIN, fault.line()
    assert fault.notes['rejoined_s'] is not None, fault.line()
    stale = [a for a in harness.history.attempts
             if a['actor'].startswith(fault.notes['member']) and
             a['outcome'] == 'stale']
    assert stale, 'the woken worker wrote nothing stale'


def test_a_worker_cut_off_mid_batch_is_taken_over_in_seconds_by_default(
        make_harness):
    """The same with the worker's host cut off the network (a network
    namespace whose link goes down): its requests move on within the
    bound, and when the link is back it joins the group again."""
    _, fault = _run(make_harness, functools.partial(
        faults.cut_worker, seconds=FROZEN_SECONDS), defaults=True,
        conf=QUORUM, cut_off=True)
    assert fault.notes['held'], 'the cut-off worker held no request'
    assert fault.recovery_s <= TAKEN_OVER_WITHIN, fault.line()


def test_a_worker_frozen_between_its_power_on_claim_and_call_sends_none(
        make_harness):
    """The worker stops right after its claim is committed, before its
    Ironic call, for longer than the claim's window and its lease: the
    start is taken over (the node powered on once, by another worker)
    and the woken worker drops its call."""
    harness, fault = _run(make_harness, faults.freeze_after_claim,
                          defaults=True, conf=QUORUM,
                          freeze_after='power-on')
    assert fault.recovery_s <= TAKEN_OVER_WITHIN, fault.line()
    with open(harness.failpoint.log, 'rb') as log:
        log.seek(fault.notes['log_from'])
        woken = log.read().decode(errors='replace')
    assert 'Not doing power-on of node %s' % fault.notes['node'] in woken


def test_a_frozen_periodic_leader_is_replaced_in_seconds_by_default(
        make_harness):
    """The leader of the ``timeout`` job SIGSTOPed: another member leads
    (a new epoch in SQL) within the lease (2 s) plus the watch and the
    campaign, and the woken leader's writes are fenced."""
    _, fault = _run(make_harness, faults.pause_leader, defaults=True,
                    conf=QUORUM)
    assert fault.recovery_s <= LEADER_WITHIN, fault.line()


def test_a_rabbitmq_restart_mid_batch_loses_no_request(make_harness):
    _run(make_harness, faults.restart_rabbitmq)


def test_a_redis_restart_mid_batch_loses_no_request(make_harness):
    _run(make_harness, faults.restart_redis)


def test_a_database_restart_mid_batch_loses_no_request(make_harness):
    _run(make_harness, faults.restart_database)


def test_a_worker_partitioned_from_redis_stops_and_its_work_finishes(
        make_harness):
    _, fault = _run(make_harness, faults.partition_worker, proxied=True)
    assert fault.notes['exit'] == 1, fault.notes


def test_a_poison_request_is_dead_lettered_and_nothing_else_moves(
        make_harness):
    _run(make_harness, faults.poison, allowed_errors=(
        'without success; last failure: JSONDecodeError',),
        silent=True, conf={'worker': {'max_deliveries': 3}})
