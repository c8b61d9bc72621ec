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
import queue as queue_mod
import threading

import oslo_messaging as messaging

from inspector_ha.messaging import objects

LOG = logging.getLogger(__name__)
EVENT_TYPE = 'inspector_ha.request'


def get_transport(conf):
    """One transport per service; in-process ``fake://`` needs sharing."""
    return messaging.get_notification_transport(conf)


class Publisher:
    """Publishes from a background thread, so a slow or unreachable broker
    never holds up an API response; a message that cannot be sent is
    dropped (and logged) because the outbox re-drives it from SQL."""

    def __init__(self, transport, topic, publisher_id, retry, backlog=10000):
        self._notifier = messaging.Notifier(
            transport, publisher_id=publisher_id, driver='messaging',
            topics=[topic], retry=retry)
        self._backlog = queue_mod.Queue(backlog)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='publisher')
        self._thread.start()

    def publish(self, request_id, node_uuid, event):
        obj = objects.TransitionRequest(request_id=request_id,
                                        node_uuid=node_uuid, event=event)
        try:
            self._backlog.put_nowait(objects.to_primitive(obj))
        except queue_mod.Full:
            LOG.warning('Publish backlog full; request %s waits for the '
                        're-drive', request_id)

    def _run(self):
        while True:
            primitive = self._backlog.get()
            if primitive is None:
                return
            self._notifier.info({}, EVENT_TYPE, primitive)

    def close(self, timeout=5.0):
        """Send what is queued (up to ``timeout``), then stop."""
        self._backlog.put(None)
        self._thread.join(timeout)


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
