"""The request queue of a process whose transport is ``fake://`` (the
embedded default): a Python queue between its API and its worker
threads, in place of oslo.messaging's in-process driver.

With that driver a consumer with nothing to take slept 50 ms at a time,
and each message went through oslo.messaging's notifier, the driver's
deep copy and the publisher's own thread. Here a message is the request
object itself (:mod:`inspector_ha.messaging.objects`), not its primitive
(about 0.15 ms of CPU to make and read again, on the 2-core benchmark
machine, and only this process reads it), put on the queue by the API's
own thread and taken by a waiting worker thread at once. The
guarantees are those of ``fake://``: a message lives in this process
only, a worker that does not consume it puts it back at the end of the
queue, and the outbox re-drive publishes again from SQL whatever a
stopped process held.
"""

from __future__ import annotations

import queue as queue_mod
import threading
from typing import Any


class LocalQueue:
    """One process's queue: :meth:`put` a request, :meth:`listener` for
    each consuming thread (the poll-style listener interface the
    :class:`~inspector_ha.messaging.queue.Consumer` uses)."""

    def __init__(self) -> None:
        self._messages: queue_mod.SimpleQueue[Message] = (
            queue_mod.SimpleQueue())

    def put(self, payload: Any) -> None:
        self._messages.put(Message(self, payload))

    def listener(self) -> Listener:
        return Listener(self._messages)

    def cleanup(self) -> None:
        """What a transport does as its process stops: nothing here."""


class Message:
    """A delivered message: ``message['payload']`` is the request."""

    def __init__(self, owner: LocalQueue, payload: Any) -> None:
        self._owner = owner
        self.message = {'payload': payload}

    def acknowledge(self) -> None:
        """Consumed: nothing to tell anyone."""

    def requeue(self) -> None:
        """Not consumed: back at the end of the queue."""
        self._owner.put(self.message['payload'])


class Listener:
    """One consuming thread's view of the queue."""

    def __init__(self, messages: queue_mod.SimpleQueue[Message]) -> None:
        self._messages = messages
        self._stopped = threading.Event()

    def poll(self, timeout: float | None = None) -> Message | None:
        """The next message, waiting up to ``timeout`` seconds; None once
        stopped or when none came."""
        if self._stopped.is_set():
            return None
        try:
            return self._messages.get(timeout=timeout)
        except queue_mod.Empty:
            return None

    def stop(self) -> None:
        self._stopped.set()

    def cleanup(self) -> None:
        """Nothing is held for this listener."""
