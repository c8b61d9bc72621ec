"""The worker's handling of one delivered request, on a real Service.

No consumer is started: each test delivers a ``TransitionRequest`` to
``Worker.handle`` itself and reads the outcome back from SQL.  Only paths
that do not call Ironic are driven here.
"""

import threading

import pytest

from deliveries import after_each_commit
from deliveries import deliver as _deliver
from deliveries import node as _node
from deliveries import queue as _queue
from deliveries import request as _request
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.coordination import tooz_backend
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.engine import worker as worker_mod
from inspector_ha.fsm import states as st
from inspector_ha.messaging import objects

ACTOR = 'unit-test'


@pytest.fixture
def worker(service):
    return service.worker()


def _history(service, uuid):
    return [(t.event, t.from_state, t.to_state, t.request_id)
            for t in service.store.transaction(nodes.history, uuid)]


def test_an_error_request_ends_a_waiting_introspection_with_its_message(
        worker, service, put_node):
    uuid = put_node(st.WAITING, macs=['11:22:33:44:55:66'])
    request_id = _queue(service, uuid, st.FAIL,
                        payload={'error': 'Ramdisk reported error: boom'})
    assert _deliver(worker, service, request_id) is True
    node = _node(service, uuid)
    assert (node.state, node.error) == ('error',
                                        'Ramdisk reported error: boom')
    assert node.finished_at is not None
    assert _request(service, request_id).status == 'done'
    assert _history(service, uuid)[-1] == ('error', 'waiting', 'error',
                                           request_id)


def test_a_timeout_request_ends_an_introspection_with_upstreams_text(
        worker, service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.TIMEOUT)
    assert _deliver(worker, service, request_id) is True
    assert _node(service, uuid).error == 'Introspection timeout'
    assert _request(service, request_id).status == 'done'


def test_a_duplicate_delivery_of_a_done_request_is_consumed_without_effect(
        worker, service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.FAIL, payload={'error': 'x'})
    assert _deliver(worker, service, request_id) is True
    before = (_node(service, uuid).generation, _history(service, uuid),
              _request(service, request_id).deliveries)
    assert _deliver(worker, service, request_id) is True
    after = (_node(service, uuid).generation, _history(service, uuid),
             _request(service, request_id).deliveries)
    assert after == before


def test_a_request_unknown_to_the_ledger_is_consumed(worker, put_node):
    uuid = put_node(st.WAITING)
    assert worker.handle(objects.TransitionRequest(
        request_id='8a6c1c1e-6f0e-4c43-9bb4-5ad0cc2fd0ab', node_uuid=uuid,
        event=st.ABORT)) is True


def test_a_request_for_a_stale_attempt_is_rejected(worker, service,
                                                   put_node):
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.ABORT, attempt=1)
    service.store.transaction(nodes.restart, _node(service, uuid), True,
                              ACTOR, None)
    generation = _node(service, uuid).generation
    assert _deliver(worker, service, request_id) is True
    request = _request(service, request_id)
    assert request.status == 'rejected' and 'stale' in request.detail
    node = _node(service, uuid)
    assert (node.state, node.attempt, node.generation) == (
        'starting', 2, generation)


def test_a_request_for_a_node_gone_is_rejected(worker, service):
    request_id = _queue(service, '4a3f2d35-8f56-4b0e-9a73-5d1b0f2e0c01',
                        st.ABORT)
    assert _deliver(worker, service, request_id) is True
    assert _request(service, request_id).status == 'rejected'


def test_an_illegal_event_is_consumed_and_recorded_as_rejected(
        worker, service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.REAPPLY)
    assert _deliver(worker, service, request_id) is True
    request = _request(service, request_id)
    assert request.status == 'rejected'
    assert request.detail == ("Can not transition from state 'waiting' on "
                              "event 'reapply' (no defined transition)")
    assert (_node(service, uuid).state, _node(service, uuid).generation) \
        == ('waiting', 2)


@pytest.fixture
def other_member(service_conf):
    stop = threading.Event()
    member = tooz_backend.Coordinator(
        service_conf.coordination.backend_url, 'other-member',
        retry.RetryPolicy('coordination', 0, 0.0, stop, ()))
    member.start()
    yield member
    member.stop()


def test_a_request_for_a_node_locked_elsewhere_is_put_back(
        worker, service, put_node, other_member):
    uuid = put_node(st.WAITING, manage_boot=False)
    request_id = _queue(service, uuid, st.ABORT)
    lock = other_member.node_lock(uuid)
    assert lock.try_acquire()
    try:
        assert _deliver(worker, service, request_id) is False
        node = _node(service, uuid)
        assert (node.state, node.generation) == ('waiting', 2)
        request = _request(service, request_id)
        assert (request.status, request.deliveries) == ('pending', 0)
    finally:
        lock.release()
    assert _deliver(worker, service, request_id) is True
    assert _node(service, uuid).state == 'error'


def test_a_done_request_for_a_node_locked_elsewhere_is_consumed(
        worker, service, put_node, other_member):
    uuid = put_node(st.WAITING, manage_boot=False)
    request_id = _queue(service, uuid, st.ABORT, status=ledger.DONE)
    lock = other_member.node_lock(uuid)
    assert lock.try_acquire()
    try:
        assert _deliver(worker, service, request_id) is True
        assert _request(service, request_id).deliveries == 0
    finally:
        lock.release()


def test_a_message_naming_another_node_is_applied_under_its_requests_node(
        worker, service, put_node, other_member):
    uuid = put_node(st.WAITING, manage_boot=False)
    other = put_node(st.WAITING, manage_boot=False)
    request_id = _queue(service, uuid, st.ABORT)
    lock = other_member.node_lock(uuid)
    assert lock.try_acquire()
    try:
        assert worker.handle(objects.TransitionRequest(
            request_id=request_id, node_uuid=other, event=st.ABORT)) is False
        assert _request(service, request_id).deliveries == 0
    finally:
        lock.release()
    assert worker.handle(objects.TransitionRequest(
        request_id=request_id, node_uuid=other, event=st.ABORT)) is True
    assert (_node(service, uuid).state, _node(service, other).state) == (
        'error', 'waiting')
    assert _request(service, request_id).deliveries == 1


def test_a_process_request_met_again_in_processing_moves_the_node_to_error(
        worker, service, put_node, ironic_discovery):
    uuid = put_node(st.PROCESSING)
    request_id = _queue(service, uuid, st.PROCESS, payload={'inventory': {}},
                        status=ledger.APPLIED)
    assert _deliver(worker, service, request_id) is True
    node = _node(service, uuid)
    assert node.state == 'error'
    assert 'refusing to process twice' in node.error
    assert _request(service, request_id).status == 'done'
    assert ironic_discovery.calls_beyond_discovery() == []


def test_a_request_delivered_too_often_moves_the_node_to_error(
        worker, service, service_conf, put_node):
    service_conf.set_override('max_deliveries', 2, group='worker')
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.ABORT)
    for _ in range(2):
        service.store.transaction(ledger.count_delivery, request_id)
    assert _deliver(worker, service, request_id) is True
    node = _node(service, uuid)
    assert node.state == 'error'
    assert node.error == ('Request abort was delivered 3 times without '
                          'success')
    assert _request(service, request_id).status == 'dead'
    assert _history(service, uuid)[-1] == ('error', 'waiting', 'error',
                                           request_id)


def test_an_abort_without_managed_boot_ends_in_canceled_by_operator(
        worker, service, put_node, ironic_discovery):
    uuid = put_node(st.WAITING, macs=['11:22:33:44:55:66'],
                    manage_boot=False)
    request_id = _queue(service, uuid, st.ABORT)
    assert _deliver(worker, service, request_id) is True
    node = _node(service, uuid)
    assert (node.state, node.error) == ('error', 'Canceled by operator')
    assert node.finished_at is not None
    assert _history(service, uuid)[-2:] == [
        ('abort', 'waiting', 'aborting', request_id),
        ('abort_end', 'aborting', 'error', request_id)]
    assert _request(service, request_id).status == 'done'
    assert ironic_discovery.calls_beyond_discovery() == []


def test_a_stopping_worker_puts_every_request_back(worker, service,
                                                   put_node):
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.ABORT)
    service.stop.set()
    assert _deliver(worker, service, request_id) is False
    assert _request(service, request_id).status == 'pending'


def test_a_delete_request_removes_the_node_row(worker, service, put_node):
    uuid = put_node(st.FINISHED)
    request_id = _queue(service, uuid, st.DELETE)
    assert _deliver(worker, service, request_id) is True
    assert _node(service, uuid) is None
    assert _request(service, request_id).status == 'done'


def test_a_timeout_redelivered_after_it_was_applied_is_done(
        worker, service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.TIMEOUT)
    # NOTE: what the worker commits before it dies: the transition and the
    # request marked applied, in one transaction (engine/worker.py _save).
    service.store.transaction(
        worker_mod._save, _node(service, uuid), _request(service, request_id),
        st.ERROR, ACTOR, 'Introspection timeout')
    assert _deliver(worker, service, request_id) is True
    assert _node(service, uuid).error == 'Introspection timeout'
    assert _request(service, request_id).status == 'done'


def test_a_duplicate_delivered_while_the_first_holds_the_node_is_put_back(
        service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.FAIL, payload={'error': 'boom'})
    message = objects.TransitionRequest(request_id=request_id,
                                        node_uuid=uuid, event=st.FAIL)
    outcomes = {}

    def deliver(name):
        outcomes[name] = service.worker().handle(message)

    def other_comes_meanwhile():
        # NOTE: fires after the holder's first commit (its read of the
        # request under the node's lock, still pending), before it applies.
        if threading.current_thread().name == 'holder' and \
                'other' not in outcomes:
            other = threading.Thread(target=deliver, args=('other',))
            other.start()
            other.join(timeout=30)

    with after_each_commit(service.store, other_comes_meanwhile):
        holder = threading.Thread(target=deliver, args=('holder',),
                                  name='holder')
        holder.start()
        holder.join(timeout=60)
    assert outcomes == {'other': False, 'holder': True}
    assert [h for h in _history(service, uuid) if h[3] == request_id] == [
        ('error', 'waiting', 'error', request_id)]
    assert _node(service, uuid).generation == 3
    assert _deliver(service.worker(), service, request_id) is True
    assert _node(service, uuid).generation == 3


def test_a_committed_transition_observes_the_time_spent_in_the_state_left(
        worker, service, put_node):
    waited = metrics.STATE_SECONDS.labels(st.WAITING)
    before = waited._sum.get(), _count(waited)
    uuid = put_node(st.WAITING)
    request_id = _queue(service, uuid, st.TIMEOUT)
    assert _deliver(worker, service, request_id) is True
    assert _count(waited) == before[1] + 1
    assert 0 <= waited._sum.get() - before[0] < 60


def _count(histogram):
    return sum(bucket.get() for bucket in histogram._buckets)
