"""The request queue on oslo.messaging: publisher and consumer.

Publishing uses the notification API, which declares the (optionally
durable or quorum) queue on the broker so nothing published before the
first worker starts is lost. Consuming uses a notification listener with
``allow_requeue=True``: a message is acknowledged only after the handler
returns ``True``; when it returns ``False`` or raises, or the process
dies first, the broker delivers the message again (at-least-once).
Publishing is best effort by design: the request is already in SQL and
is re-driven from there if its message is lost (outbox).
"""

import logging

import oslo_messaging as messaging

from inspector_ha.messaging import objects

LOG = logging.getLogger(__name__)
EVENT_TYPE = 'inspector_ha.request'


def get_transport(conf):
    """One transport per service; in-process ``fake://`` needs sharing."""
    return messaging.get_notification_transport(conf)


class Publisher:
    def __init__(self, transport, topic, publisher_id, retry=None):
        self._notifier = messaging.Notifier(
            transport, publisher_id=publisher_id, driver='messaging',
            topics=[topic], retry=retry)

    def publish(self, request_id, node_uuid, event):
        obj = objects.TransitionRequest(request_id=request_id,
                                        node_uuid=node_uuid, event=event)
        self._notifier.info({}, EVENT_TYPE, objects.to_primitive(obj))


class _Endpoint:
    def __init__(self, handler):
        self._handler = handler

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        request = objects.from_primitive(payload)
        if self._handler(request):
            return messaging.NotificationResult.HANDLED
        return messaging.NotificationResult.REQUEUE


class Consumer:
    """A pool of ``pool_size`` threads running ``handler(request)``.

    ``handler`` returns True to consume the message, False to put it back.
    """

    def __init__(self, transport, topic, handler, pool_size):
        self._pool_size = pool_size
        self._listener = messaging.get_notification_listener(
            transport, [messaging.Target(topic=topic)], [_Endpoint(handler)],
            executor='threading', allow_requeue=True)

    def start(self):
        self._listener.start(override_pool_size=self._pool_size)

    def stop(self):
        self._listener.stop()

    def wait(self):
        self._listener.wait()
