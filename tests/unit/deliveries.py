"""Helpers of the worker tests: queue a request, deliver it to a worker
the way the consumer does, read back the request and the node."""

import contextlib

from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.messaging import objects


def queue(service, uuid, event, attempt=1, payload=None, status=None):
    row = service.store.transaction(ledger.add, uuid, event, attempt,
                                    payload=payload)
    if status is not None:
        service.store.transaction(ledger.mark, row.id, status)
    return row.id


def deliver(worker, service, request_id):
    row = service.store.transaction(ledger.get, request_id)
    return worker.handle(objects.TransitionRequest(
        request_id=request_id, node_uuid=row.node_uuid, event=row.event))


def node(service, uuid):
    return service.store.transaction(nodes.get, uuid)


def request(service, request_id):
    return service.store.transaction(ledger.get, request_id)


@contextlib.contextmanager
def after_each_commit(store, hook):
    """Call ``hook()`` after each transaction ``store`` commits, in the
    thread that ran it, until the block ends."""
    original = store.transaction

    def transaction(func, *args, **kwargs):
        result = original(func, *args, **kwargs)
        hook()
        return result

    store.transaction = transaction
    try:
        yield
    finally:
        del store.transaction
