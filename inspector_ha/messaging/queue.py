"""The request queue on oslo.messaging: publisher and consumer.

Publishing uses the notification API, which declares the (optionally durable or
quorum) queue on the broker so nothing published before the first worker starts
is lost. Consuming is the worker loop of doc/design.md on oslo.messaging's
notification listener (:class:`Consumer`): a message is acknowledged only after
the handler returns ``True``; when it returns ``False`` or raises, or the
process dies first, the broker delivers the message again (at-least-once).
A message of a newer release (a version or an event this one does not
know) is put back for another member before the handler sees it, so no
delivery is counted.
A message that cannot be decoded would fail the same way every time: it
is acknowledged and dropped (its request, if any, stays open in SQL).
Publishing is best effort by design: the request is already in SQL and
is re-driven from there if its message is lost (outbox).
With ``fake://`` (the embedded default) the queue is the process's own
(:mod:`inspector_ha.messaging.local`), not oslo.messaging's.

oslo.messaging's rabbit driver reconnects forever and a consumer's poll
just times out while the broker is gone, so a worker cannot tell an empty
queue from a lost broker by consuming: that is
:mod:`inspector_ha.messaging.probe`'s.
"""

from __future__ import annotations

import logging
import queue as queue_mod
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast

import oslo_messaging as messaging

from inspector_ha.coordination import releases
from inspector_ha.messaging import cluster_share
from inspector_ha.messaging import local
from inspector_ha.messaging import objects

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
EVENT_TYPE = 'inspector_ha.request'
#: oslo.messaging's transport, or this process's own queue (``fake://``).
Transport: TypeAlias = 'messaging.Transport | local.LocalQueue'


def get_transport(conf: cfg.ConfigOpts) -> Transport:
    """One transport per service, at oslo.messaging's URL for
    notifications (``[oslo_messaging_notifications] transport_url``, else
    ``[DEFAULT]``'s); for ``fake://``, this process's
    :class:`~inspector_ha.messaging.local.LocalQueue`."""
    transport = messaging.get_notification_transport(conf)
    url = conf.oslo_messaging_notifications.transport_url
    if in_process(conf, url or conf.transport_url):
        transport.cleanup()
        return local.LocalQueue()
    return transport


class Publishing(Protocol):
    """What publishes a recorded request (either publisher)."""

    def publish(self, request_id: str, node_uuid: str,
                event: str) -> None: ...

    def close(self, timeout: float = 5.0) -> None: ...


def publisher(transport: Transport, topic: str, publisher_id: str,
              retry: int | None,
              version_for: Callable[[str], str | None] | None = None
              ) -> Publishing:
    """The publisher of ``transport``'s kind."""
    if isinstance(transport, local.LocalQueue):
        return LocalPublisher(transport)
    return Publisher(transport=transport, topic=topic,
                     publisher_id=publisher_id, retry=retry,
                     version_for=version_for)


class LocalPublisher:
    """Puts a request on this process's own queue, from the caller's
    thread (it never waits), at this release's own version: the only
    reader is this process."""

    def __init__(self, transport: local.LocalQueue) -> None:
        self._queue = transport

    def publish(self, request_id: str, node_uuid: str, event: str) -> None:
        self._queue.put(
            objects.transition_request(request_id, node_uuid, event))

    def close(self, timeout: float = 5.0) -> None:
        """Nothing is held back."""


class Publisher:
    """Publishes from a background thread, so a slow or unreachable broker
    never holds up an API response; a message that cannot be sent is
    dropped (and logged) because the outbox re-drives it from SQL."""

    def __init__(self, *, transport: messaging.Transport, topic: str,
                 publisher_id: str, retry: int | None,
                 version_for: Callable[[str], str | None] | None = None,
                 backlog: int = 10000) -> None:
        self._notifier = messaging.Notifier(
            transport, publisher_id=publisher_id, driver='messaging',
            topics=[topic], retry=retry)
        # NOTE: the version every live member reads (releases.Releases);
        # None publishes at this release's own versions.
        self._version_for = version_for
        self._backlog: queue_mod.Queue[objects.TransitionRequest | None] = (
            queue_mod.Queue(backlog))
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='publisher')
        self._thread.start()

    def publish(self, request_id: str, node_uuid: str, event: str) -> None:
        obj = objects.transition_request(request_id, node_uuid, event)
        try:
            self._backlog.put_nowait(obj)
        except queue_mod.Full:
            LOG.warning('Publish backlog full; request %s waits for the '
                        're-drive', request_id)

    def _run(self) -> None:
        while True:
            obj = self._backlog.get()
            if obj is None:
                return
            # NOTE: the version is chosen here, not in publish(): reading
            # the members' versions may wait for the coordination backend,
            # which must never hold up an API answer (D6).
            version = (self._version_for(obj.obj_name())
                       if self._version_for is not None else None)
            self._notifier.info({}, EVENT_TYPE,
                                objects.to_primitive(obj, version))

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (up to ``timeout``), then stop."""
        self._backlog.put(None)
        self._thread.join(timeout)


class Consumer:
    """The worker loop of doc/design.md for ``pool_size`` threads: take a
    request -> ``handler(request)`` -> acknowledge (True) or put back
    (False, or an exception).

    On oslo.messaging, through its public notification listener (a
    threading executor of one thread per message of the prefetch
    ``window``, ``allow_requeue``): its own thread polls the broker, so
    heartbeats go on while requests are handled, and acknowledges between
    polls (hence a window of twice the pool, ``service._tune_rabbit``;
    measured in ``benchmarks/results/2026-12-07-listener-ack.md``); a
    message waiting for a slot is held (``hold(request)``) in SQL. With
    ``fake://``, ``pool_size`` threads each poll this process's own
    queue.

    Only as many requests as ``share`` admits (this process's share of
    ``[worker] cluster_concurrency``; by default the whole pool) are
    handled at once: a request beyond them waits up to ``get_timeout``
    for a slot, then goes back to the queue. A stopping consumer
    finishes the requests in hand and puts back the others; what it has
    not acknowledged returns to the queue when its connection closes.
    """

    def __init__(self, *, transport: Transport, topic: str,
                 handler: Callable[[objects.TransitionRequest], bool],
                 pool_size: int, get_timeout: float, stop: threading.Event,
                 requeue_delay: float = 0.0,
                 share: cluster_share.ClusterShare | None = None,
                 window: int = 0,
                 hold: Callable[[objects.TransitionRequest], None] = (
                     lambda request: None)) -> None:
        self._transport = transport
        self._window = max(window, pool_size)
        if window < pool_size and not isinstance(transport, local.LocalQueue):
            LOG.warning('rabbit_qos_prefetch_count = %d is below [worker] '
                        'pool_size (%d)%s: keep it at least the pool (twice '
                        'by default)', window, pool_size,
                        ', so one worker may take the whole queue'
                        if window == 0 else '')
        self._hold = hold
        self._requeue_delay = requeue_delay
        self._target = messaging.Target(topic=topic)
        self._handler = handler
        self._pool_size = pool_size
        self._timeout = get_timeout
        self._stop = stop
        self._share = share or cluster_share.ClusterShare(0, pool_size)
        self._threads: list[threading.Thread] = []
        self._server: Any = None
        #: When (``time.monotonic()``) a message was last delivered: the
        #: broker answered then (the backend watch's probe spared).
        self.delivered_at = 0.0

    def start(self) -> None:
        if not isinstance(self._transport, local.LocalQueue):
            self._server = messaging.get_notification_listener(
                self._transport, [self._target], [_Endpoint(self)],
                executor='threading', allow_requeue=True)
            # NOTE: a thread for each message of the prefetch window, so
            # none waits uncounted in the executor's queue (the frozen
            # worker's backlog no take-over could see); the threads
            # beyond the share wait for a slot (delivered()).
            self._server.start(override_pool_size=self._window)
            return
        for index in range(self._pool_size):
            thread = threading.Thread(
                target=self._loop, args=(index, self._transport.listener()),
                name='worker-%d' % index, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _loop(self, index: int, listener: local.Listener) -> None:
        """One thread on this process's own queue: the threads numbered
        below the share take requests, the others wait for it to grow."""
        while not self._stop.is_set():
            if not self._share.admits(index, self._timeout):
                continue
            message = listener.poll(timeout=self._timeout)
            if message is not None:
                self.delivered_at = time.monotonic()
                self._admitted_one(index, message)

    def _admitted_one(self, index: int, message: Any) -> None:
        """Handle ``message`` unless the share shrank below thread
        ``index`` during the poll: then another worker takes it."""
        if self._share.admits(index):
            self._one(message)
        else:
            message.requeue()

    def _one(self, message: Any) -> None:
        if self.consume(message.message['payload']):
            message.acknowledge()
        else:
            message.requeue()

    def consume(self, payload: Any) -> bool:
        """Whether the message carrying ``payload`` is consumed (to be
        acknowledged) rather than put back."""
        request = self._decoded(payload)
        if isinstance(request, bool):
            return request
        return self._handled(request)

    def delivered(self, payload: Any) -> bool:
        """A message from the broker: consumed within a slot of the share,
        or put back. One that must wait for a slot (up to
        ``get_timeout``) is held first, so a take-over sees it if this
        member's lease lapses meanwhile (``doc/guarantees.md`` D3c)."""
        self.delivered_at = time.monotonic()
        if self._stop.is_set():
            return False
        request = self._decoded(payload)
        if isinstance(request, bool):
            return request
        if not self._share.take(0):
            self._hold(request)
            if not self._share.take(self._timeout):
                return False
        try:
            return self._handled(request)
        finally:
            self._share.give_back()

    def _decoded(self, payload: Any) -> objects.TransitionRequest | bool:
        """The request ``payload`` carries, or the fate of a message
        that carries none this worker can handle (True: consumed)."""
        try:
            return _request_of(payload)
        except objects.NotUnderstood as exc:
            # NOTE: a newer member sent it: another member reads it. Put
            # back before the handler counts a delivery (max_deliveries).
            LOG.info('Putting back a message of a newer release: %s', exc)
            self._stop.wait(self._requeue_delay)
            return False
        except Exception as exc:
            # NOTE: it would fail the same way on every delivery. The
            # request (if any) is still open in SQL: the outbox publishes
            # it again, and a worker that can read it will take it.
            LOG.error('Dropping a message this worker cannot decode: %r',
                      exc)
            return True

    def _handled(self, request: objects.TransitionRequest) -> bool:
        try:
            return bool(self._handler(request))
        except Exception:
            LOG.exception('Request handling failed; it will be redelivered')
            return False

    def wait(self, timeout: float | None = None) -> None:
        """Stop taking requests and wait for those in hand, all within
        ``timeout`` seconds in total (the stop flag is set already)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        threads = list(self._threads)
        if self._server is not None:
            stopper = threading.Thread(target=self._stop_server,
                                       name='consumer-stop', daemon=True)
            stopper.start()
            threads.append(stopper)
        for thread in threads:
            thread.join(None if deadline is None else
                        max(0.0, deadline - time.monotonic()))

    def _stop_server(self) -> None:
        self._server.stop()
        self._server.wait()


class _Endpoint:
    """The notification listener's endpoint: every request is published
    as an ``info`` notification of :data:`EVENT_TYPE`."""

    def __init__(self, consumer: Consumer) -> None:
        self._consumer = consumer

    def info(self, ctxt: Any, publisher_id: str, event_type: str,
             payload: Any, metadata: Any) -> Any:
        if self._consumer.delivered(payload):
            return messaging.NotificationResult.HANDLED
        return messaging.NotificationResult.REQUEUE


def _request_of(payload: Any) -> objects.TransitionRequest:
    """The request a message of this topic carries: a primitive from the
    broker, or from this process's own queue the object itself."""
    if isinstance(payload, objects.TransitionRequest):
        return payload
    return cast(objects.TransitionRequest, objects.from_primitive(
        payload, releases.RELEASES[releases.CURRENT]['events']))


def in_process(conf: cfg.ConfigOpts, url: str | None = None) -> bool:
    """Whether ``url`` (by default ``[DEFAULT] transport_url``, the RPC
    transport's) is ``fake://``: messages reach this process alone (the
    embedded default)."""
    return messaging.TransportURL.parse(
        conf, url or conf.transport_url).transport == 'fake'
