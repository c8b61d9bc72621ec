"""A delivery that wakes up after its lock expired (SIGSTOP, a long GC)
and finds its follow-up beaten by another delivery of the same request
leaves that request to the other delivery: closing it would make the
other one's follow-up fail and strand the node (found by the fault
suite's SIGSTOP test)."""

import pytest

from deliveries import after_each_commit
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.engine import worker as worker_mod
from inspector_ha.fsm import states as st
from inspector_ha.messaging import objects


@pytest.fixture
def worker(service):
    return service.worker()


def _another_delivery_applies_it_again(service, request_id):
    """After the first commit that leaves the request applied, commit what
    a redelivery commits first: the same transition, again."""
    state = {'busy': False, 'done': False}

    def hook():
        if state['busy'] or state['done']:
            return
        state['busy'] = True
        try:
            request = service.store.transaction(ledger.get, request_id)
            if request.status == ledger.APPLIED:
                node = service.store.transaction(nodes.get,
                                                 request.node_uuid)
                service.store.transaction(worker_mod._save, node, request,
                                          st.ABORTING, 'redelivery', None)
                state['done'] = True
        finally:
            state['busy'] = False
    return hook


def test_a_late_follow_up_leaves_the_request_to_its_other_delivery(
        worker, service, put_node):
    uuid = put_node(st.WAITING, manage_boot=False)
    generation = service.store.transaction(nodes.get, uuid).generation
    request_id = service.store.transaction(ledger.add, uuid, st.ABORT,
                                           1).id
    hook = _another_delivery_applies_it_again(service, request_id)
    with after_each_commit(service.store, hook):
        assert worker.handle(objects.TransitionRequest(
            request_id=request_id, node_uuid=uuid, event=st.ABORT)) is True
    # NOTE: this delivery's follow-up (abort_end) lost to the redelivery's
    # write; the request stays open for the redelivery to finish.
    assert service.store.transaction(ledger.get,
                                     request_id).status == 'applied'
    node = service.store.transaction(nodes.get, uuid)
    assert (node.state, node.generation) == ('aborting', generation + 2)
    last = service.store.transaction(nodes.history, uuid)[-1]
    assert (last.actor, last.request_id) == ('redelivery', request_id)
