"""The embedded default's request queue: ``fake://`` is this process's
own queue (inspector_ha/messaging/local.py), not oslo.messaging's
in-process driver, with the consumer's semantics unchanged."""

import threading
import time
import uuid as uuidlib

from inspector_ha.messaging import local
from inspector_ha.messaging import objects
from inspector_ha.messaging import queue
from inspector_ha import service as service_mod

import backends


def _consumer(transport, handler, stop, pool_size=2):
    consumer = queue.Consumer(transport=transport, topic='local-test',
                              handler=handler, pool_size=pool_size,
                              get_timeout=0.1, stop=stop)
    consumer.start()
    return consumer


def test_a_service_on_fake_transport_queues_its_requests_in_process(
        service_conf):
    svc = service_mod.Service(service_conf)
    try:
        assert isinstance(svc.transport, local.LocalQueue)
        request_id, node = str(uuidlib.uuid4()), str(uuidlib.uuid4())
        svc.publisher.publish(request_id, node, 'start')
        message = svc.transport.listener().poll(timeout=5)
        request = message.message['payload']
        assert isinstance(request, objects.TransitionRequest)
        assert (request.request_id, request.node_uuid, request.event) == (
            request_id, node, 'start')
    finally:
        svc.publisher.close()
        svc.transport.cleanup()
        svc.store.dispose()


def test_a_request_a_worker_does_not_consume_is_delivered_again():
    transport, stop = local.LocalQueue(), threading.Event()
    deliveries = []

    def handler(request):
        deliveries.append(request.request_id)
        return len(deliveries) > 1
    consumer = _consumer(transport, handler, stop)
    try:
        request_id = str(uuidlib.uuid4())
        queue.publisher(transport, 'local-test', 'unit', None).publish(
            request_id, str(uuidlib.uuid4()), 'start')
        backends.wait_for(lambda: len(deliveries) == 2, 5)
        stop.set()
        consumer.wait(5)
        assert deliveries == [request_id, request_id]
    finally:
        stop.set()


def test_each_request_is_taken_by_one_worker_thread_once():
    transport, stop = local.LocalQueue(), threading.Event()
    taken, lock = [], threading.Lock()

    def handler(request):
        with lock:
            taken.append(request.request_id)
        return True
    consumer = _consumer(transport, handler, stop, pool_size=4)
    try:
        publisher = queue.publisher(transport, 'local-test', 'unit', None)
        sent = [str(uuidlib.uuid4()) for _ in range(200)]
        for request_id in sent:
            publisher.publish(request_id, str(uuidlib.uuid4()), 'process')
        backends.wait_for(lambda: len(taken) == len(sent), 10)
    finally:
        stop.set()
        consumer.wait(5)
    assert sorted(taken) == sorted(sent)


def test_a_stopped_listener_takes_nothing_more():
    transport = local.LocalQueue()
    listener = transport.listener()
    listener.stop()
    queue.publisher(transport, 'local-test', 'unit', None).publish(
        str(uuidlib.uuid4()), str(uuidlib.uuid4()), 'start')
    assert listener.poll(timeout=0.1) is None
    assert transport.listener().poll(timeout=1) is not None


def test_the_queue_follows_oslo_messagings_url_for_notifications(
        service_conf):
    """``[oslo_messaging_notifications] transport_url``, where set, decides
    (as oslo.messaging's notifications do), else ``[DEFAULT]``'s."""
    queue.get_transport(service_conf).cleanup()  # registers its options
    group = 'oslo_messaging_notifications'
    service_conf.set_override('transport_url', 'rabbit://u:p@127.0.0.1:1/',
                              group=group)
    transport = queue.get_transport(service_conf)
    try:
        assert not isinstance(transport, local.LocalQueue)
    finally:
        transport.cleanup()
    service_conf.set_override('transport_url', 'rabbit://u:p@127.0.0.1:1/')
    service_conf.set_override('transport_url', 'fake:/', group=group)
    assert isinstance(queue.get_transport(service_conf), local.LocalQueue)


def test_a_consumer_tells_when_its_queue_last_delivered_a_message():
    transport, stop = local.LocalQueue(), threading.Event()
    consumer = _consumer(transport, lambda request: True, stop)
    try:
        assert consumer.delivered_at == 0.0
        before = time.monotonic()
        queue.publisher(transport, 'local-test', 'unit', None).publish(
            str(uuidlib.uuid4()), str(uuidlib.uuid4()), 'start')
        backends.wait_for(lambda: consumer.delivered_at >= before, 5)
    finally:
        stop.set()
        consumer.wait(5)
