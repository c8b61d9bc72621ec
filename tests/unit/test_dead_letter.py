"""Poison requests: a request whose handling fails on every delivery is
dead-lettered after ``[worker] max_deliveries``, and nothing else moves.

The poison is real, not mocked: a ledger row whose payload is not JSON (as
a faulty or incompatible writer could leave), for an ``error`` event on a
waiting node, so reading the ramdisk's message raises on every delivery.
"""

import pytest
import sqlalchemy as sa

from deliveries import deliver as _deliver
from deliveries import node as _node
from deliveries import request as _request
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st

MAX = 3


@pytest.fixture
def worker(service, service_conf):
    service_conf.set_override('max_deliveries', MAX, group='worker')
    return service.worker()


def _poison(service, uuid):
    row = service.store.transaction(ledger.add, uuid, st.FAIL, 1)
    service.store.transaction(_corrupt, row.id)
    return row.id


def _corrupt(conn, request_id):
    conn.execute(sa.update(models.Request)
                 .where(models.Request.id == request_id)
                 .values(payload='{"error": '))


def test_a_poison_request_is_put_back_until_its_last_allowed_delivery(
        worker, service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _poison(service, uuid)
    assert [_deliver(worker, service, request_id)
            for _ in range(MAX)] == [False] * MAX
    request = _request(service, request_id)
    assert (request.status, request.deliveries) == ('pending', MAX)
    assert request.detail.startswith('JSONDecodeError')
    assert _node(service, uuid).state == 'waiting'


def test_a_poison_request_is_dead_lettered_and_fails_its_waiting_node(
        worker, service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _poison(service, uuid)
    outcomes = [_deliver(worker, service, request_id)
                for _ in range(MAX + 1)]
    assert outcomes == [False] * MAX + [True]
    request = _request(service, request_id)
    assert request.status == 'dead'
    assert request.detail.startswith(
        'Request error was delivered 4 times without success; last '
        'failure: JSONDecodeError')
    node = _node(service, uuid)
    assert (node.state, node.error) == ('error', request.detail)
    last = service.store.transaction(nodes.history, uuid)[-1]
    assert (last.event, last.from_state, last.to_state,
            last.request_id) == ('error', 'waiting', 'error', request_id)


def test_a_dead_letter_never_touches_a_node_that_moved_on(
        worker, service, put_node):
    uuid = put_node(st.WAITING)
    request_id = _poison(service, uuid)
    for _ in range(MAX):
        _deliver(worker, service, request_id)
    service.store.transaction(_finish, uuid)
    generation = _node(service, uuid).generation
    assert _deliver(worker, service, request_id) is True
    # NOTE: closed as dead, or already rejected by the end of its attempt.
    assert _request(service, request_id).status in ('dead', 'rejected')
    node = _node(service, uuid)
    assert (node.state, node.generation) == ('finished', generation)


def _finish(session, uuid):
    for event, target in ((st.PROCESS, st.PROCESSING),
                          (st.FINISH, st.FINISHED)):
        node = nodes.get(session, uuid)
        nodes.transition(session, node, event, target, 'unit-test')


def test_other_requests_are_handled_while_a_poison_one_loops(
        worker, service, put_node):
    poisoned, healthy = put_node(st.WAITING), put_node(st.WAITING)
    poison = _poison(service, poisoned)
    fine = service.store.transaction(ledger.add, healthy, st.FAIL, 1,
                                     payload={'error': 'ramdisk boom'}).id
    assert _deliver(worker, service, poison) is False
    assert _deliver(worker, service, fine) is True
    assert _node(service, healthy).error == 'ramdisk boom'
    assert _request(service, fine).status == 'done'
    assert _node(service, poisoned).state == 'waiting'


def test_a_delete_request_that_keeps_failing_is_dead_lettered_too(
        worker, service, put_node):
    uuid = put_node(st.FINISHED)
    request_id = service.store.transaction(ledger.add, uuid,
                                           st.DELETE, None).id
    for _ in range(MAX):
        service.store.transaction(ledger.count_delivery, request_id)
    assert _deliver(worker, service, request_id) is True
    assert _request(service, request_id).status == 'dead'
    assert _node(service, uuid).state == 'finished'
