"""The request queue on oslo.messaging: publisher and consumer.

Publishing uses the notification API, which declares the (optionally
durable or quorum) queue on the broker so nothing published before the
first worker starts is lost. Consuming is the design's worker loop on one listener per thread: a
message is acknowledged only after the handler returns ``True``; when it
returns ``False`` or raises, or the process dies first, the broker
delivers the message again (at-least-once).
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


class Consumer:
    """``pool_size`` worker threads, each running the design's loop on its
    own listener: get with ``get_timeout`` -> ``handler(request)`` ->
    acknowledge (True) or put back (False, or an exception).

    Each thread polls, acknowledges and requeues on its own connection
    (kombu is not thread safe), and with ``rabbit_qos_prefetch_count = 1``
    holds at most one unacknowledged message. A stopping thread finishes
    the request in hand; messages it has not started stay unacknowledged
    and return to the queue when its connection closes.
    """

    def __init__(self, transport, topic, handler, pool_size, get_timeout,
                 stop):
        self._transport = transport
        self._target = messaging.Target(topic=topic)
        self._handler = handler
        self._pool_size = pool_size
        self._timeout = get_timeout
        self._stop = stop
        self._threads = []

    def start(self):
        for index in range(self._pool_size):
            listener = _poll_style_listener(self._transport, self._target)
            thread = threading.Thread(target=self._loop, args=(listener,),
                                      name='worker-%d' % index, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _loop(self, listener):
        try:
            while not self._stop.is_set():
                for message in _as_list(listener.poll(timeout=self._timeout)):
                    self._one(message)
        finally:
            _close(listener)

    def _one(self, message):
        try:
            request = objects.from_primitive(message.message['payload'])
            consumed = self._handler(request)
        except Exception:
            LOG.exception('Request handling failed; it will be redelivered')
            consumed = False
        if consumed:
            message.acknowledge()
        else:
            message.requeue()

    def wait(self, timeout=None):
        for thread in self._threads:
            thread.join(timeout)


def _poll_style_listener(transport, target):
    """The driver's poll-style listener for ``target``.

    NOTE: this is what get_notification_listener builds on. Its server
    polls on one thread and hands messages to an executor, so it has no
    "get with timeout" and prefetches into a backlog; the design's loop
    needs the listener itself. oslo.messaging wraps it in an adapter that
    would start its own thread; the poll-style listener is inside.
    """
    listener = transport._listen_for_notifications(
        [(target, 'info')], None, 1, None)
    return getattr(listener, '_poll_style_listener', listener)


def _close(listener):
    """Stop the way the driver expects: ``stop()`` waits until a poll on
    another thread has seen the shutdown, so this thread keeps polling,
    putting back anything it has not started, until ``stop()`` returns."""
    stopper = threading.Thread(target=listener.stop, daemon=True)
    stopper.start()
    while stopper.is_alive():
        for message in _as_list(listener.poll(timeout=0.1)):
            message.requeue()
        stopper.join(0.01)
    listener.cleanup()


def _as_list(polled):
    if polled is None:
        return []
    return polled if isinstance(polled, list) else [polled]
