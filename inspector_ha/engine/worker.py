"""The HA worker's loop body for one delivered request.

get (done by the consumer) -> lock the node through tooz (not acquired:
put back) -> load the machine from SQL -> advance (illegal event:
consume) -> save with a conditional UPDATE (lost: put back) -> run the
task -> apply its follow-up and mark the request done in one transaction
-> consume -> release. Returning True consumes the message; False leaves
it to be delivered again.
"""

import logging

from inspector_ha.common import retry
from inspector_ha.db import nodes
from inspector_ha.db import requests
from inspector_ha.engine import tasks as tasks_mod
from inspector_ha.fsm import machine
from inspector_ha.fsm import states as st

LOG = logging.getLogger(__name__)
DELETE = 'delete'


class Worker:
    def __init__(self, service):
        self._svc = service
        self._store = service.store
        self._tasks = tasks_mod.Tasks(service)
        self._actor = service.member_id

    def handle(self, message):
        """Handle one delivered request; True consumes it."""
        if self._svc.stop.is_set():
            return False
        try:
            return self._handle(message)
        except retry.Interrupted:
            return False
        except retry.BackendUnavailable as exc:
            LOG.error('Stopping: %s', exc)
            self._svc.fail(exc)
            return False

    def _handle(self, message):
        request = self._store.transaction(requests.get, message.request_id)
        if request is None or request.status not in requests.OPEN:
            return True
        lock = self._svc.coordinator.node_lock(request.node_uuid)
        if not lock.try_acquire():
            return self._put_back('node %s is locked' % request.node_uuid)
        try:
            return self._drive(request)
        finally:
            lock.release()

    def _put_back(self, why):
        LOG.debug('Putting a request back: %s', why)
        self._svc.stop.wait(self._svc.conf.worker.requeue_delay)
        return False

    def _drive(self, request):
        # Read again under the lock: a delivery that finished while this
        # one waited for the lock has already done the work.
        request = self._store.transaction(requests.get, request.id)
        if request.status not in requests.OPEN:
            return True
        deliveries = self._store.transaction(requests.count_delivery,
                                             request.id)
        node = self._store.transaction(nodes.get, request.node_uuid)
        if request.event == DELETE:
            return self._delete(request)
        if node is None or request.attempt not in (None, node.attempt):
            return self._reject(request, 'stale: node gone or restarted')
        if deliveries > self._svc.conf.worker.max_deliveries:
            return self._give_up(request, node, deliveries)
        return self._advance(request, node)

    def _advance(self, request, node):
        try:
            to_state = machine.advance(node.state, request.event)
        except machine.IllegalTransition as exc:
            if request.status == requests.APPLIED:
                return self._done(request, 'already applied; %s' % exc)
            return self._reject(request, str(exc))
        error = None
        if to_state == st.ERROR:
            error = tasks_mod.error_for(request.event, node.state,
                                        requests.payload(request))
        try:
            node = self._store.transaction(
                _save, node, request, to_state, self._actor, error)
        except nodes.StaleWrite as exc:
            return self._put_back(str(exc))
        event, error = self._tasks.run(request.event, to_state, node,
                                       request)
        return self._finish(request, node, event, error)

    def _finish(self, request, node, event, error):
        try:
            self._store.transaction(_follow_up, node, request, event,
                                    self._actor, error)
        except (nodes.StaleWrite, machine.IllegalTransition) as exc:
            LOG.info('Follow-up %s of node %s lost to a newer write: %s',
                     event, node.uuid, exc)
            return self._done(request, str(exc))
        return True

    def _done(self, request, why):
        self._store.transaction(requests.mark, request.id, requests.DONE,
                                why)
        return True

    def _reject(self, request, why):
        LOG.info('Request %s (%s of node %s) rejected: %s', request.id,
                 request.event, request.node_uuid, why)
        self._store.transaction(requests.mark, request.id,
                                requests.REJECTED, why)
        return True

    def _give_up(self, request, node, deliveries):
        why = 'Request %s was delivered %d times without success' % (
            request.event, deliveries)
        return self._finish(request, node, st.FAIL, why)

    def _delete(self, request):
        self._store.transaction(_delete, request)
        return True


def _save(session, node, request, to_state, actor, error):
    """Commit the transition and mark the request applied."""
    requests.mark_open(session, request.id, requests.APPLIED)
    nodes.transition(session, node, request.event, to_state, actor,
                     request.id, error)
    return nodes.get(session, node.uuid)


def _follow_up(session, node, request, event, actor, error):
    """Apply the task's follow-up event and mark the request done."""
    if event is not None:
        to_state = machine.advance(node.state, event)
        nodes.transition(session, node, event, to_state, actor,
                         request.id, error)
    requests.mark_open(session, request.id, requests.DONE)


def _delete(session, request):
    nodes.delete(session, request.node_uuid)
    requests.mark(session, request.id, requests.DONE)
