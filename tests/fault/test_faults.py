"""Each fault injected mid-batch into a cluster of 2 API processes behind
HAProxy and 3 workers on a private RabbitMQ, Redis and MariaDB, with a real
Ironic and simulated ramdisks; the history checker (``history.py``) then
finds no violation. Recovery times are printed as ``FAULT {json}``."""

import faults
import history


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
             if a['actor'] == fault.notes['member'] and
             a['outcome'] == 'stale']
    if fault.notes['held']:
        assert stale, 'the woken worker wrote nothing stale'


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
