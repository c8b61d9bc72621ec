"""A worker thread's listener on RabbitMQ: how long its polls wait on the
broker's socket (:data:`inspector_ha.messaging.queue.POLL_FLOOR`)."""

import oslo_messaging as messaging
from oslo_config import cfg

import backends
from inspector_ha.messaging import queue


def test_a_worker_listener_waits_at_least_the_floor_after_a_message(
        rabbit_url):
    transport = messaging.get_notification_transport(cfg.CONF,
                                                     url=rabbit_url)
    target = messaging.Target(topic=backends.unique_name('floor'))
    listener = queue._poll_style_listener(transport, target)
    try:
        publisher = queue.Publisher(transport=transport, topic=target.topic,
                                    publisher_id='floor', retry=None)
        publisher.publish('request-1', 'node-1', 'start')
        publisher.close()
        polled = []
        backends.wait_for(lambda: polled.extend(queue._as_list(
            listener.poll(timeout=0.5))) or polled, 15,
            message='the message never came')
        polled[0].acknowledge()
        # NOTE: the driver's own wait after a message, which the floor is for.
        assert listener._current_timeout < queue.POLL_FLOOR
        queue.hold_poll_floor(listener)
        assert listener._current_timeout == queue.POLL_FLOOR
        assert not listener.poll(timeout=0.5)
    finally:
        queue._close(listener)
        transport.cleanup()


def test_a_firewall_server_on_rabbitmq_polls_from_the_floor_after_a_message(
        rabbit_url):
    transport = messaging.get_rpc_transport(cfg.CONF, url=rabbit_url)
    topic = backends.unique_name('floor-server')
    received = []

    class Endpoint:
        def ping(self, ctxt):
            received.append(1)

    server = messaging.get_rpc_server(
        transport, messaging.Target(topic=topic, server='member'),
        [Endpoint()], executor='threading')
    server.start()
    try:
        queue.hold_poll_floor_of(server)
        messaging.get_rpc_client(transport, messaging.Target(
            topic=topic, fanout=True)).cast({}, 'ping')
        backends.wait_for(lambda: received, 15, interval=0.01,
                          message='the cast never came')
        # NOTE: without the floor the driver waits 1 ms after a message,
        # doubling: under 0.25 s for the first quarter of a second.
        inner = server.listener._poll_style_listener
        assert inner._current_timeout >= queue.POLL_FLOOR
    finally:
        server.stop()
        server.wait()
        transport.cleanup()
