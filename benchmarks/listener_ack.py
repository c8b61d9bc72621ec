"""How long a handled message's acknowledgement takes to free the
prefetch window with oslo.messaging's public notification listener
(``get_notification_listener``, threading executor, ``allow_requeue``):
the gap between one handler's return and the next one's start, on a
real RabbitMQ (analysis for issue 50, not a test)::

    .venv/bin/python benchmarks/listener_ack.py URL PREFETCH POOL \\
        SECONDS [MESSAGES]

The listener acknowledges on its polling thread, between polls whose
wait grows to 5 s while nothing arrives; with a prefetch window as
large as the pool, a slot waits for that.
"""

import sys
import threading
import time
import uuid

from oslo_config import cfg
import oslo_messaging as messaging


class _Endpoint:
    def __init__(self, seconds, count):
        self._seconds = seconds
        self._count = count
        self._lock = threading.Lock()
        self.spans = []
        self.done = threading.Event()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        start = time.monotonic()
        time.sleep(self._seconds)
        with self._lock:
            self.spans.append((start, time.monotonic()))
            if len(self.spans) == self._count:
                self.done.set()
        return messaging.NotificationResult.HANDLED


def main(url, prefetch, pool, seconds, count=24):
    conf = cfg.ConfigOpts()
    conf([], project='listener-ack')
    topic = 'listener-ack-%s' % uuid.uuid4().hex[:8]
    transport = messaging.get_notification_transport(conf, url=url)
    conf.set_override('rabbit_qos_prefetch_count', prefetch,
                      group='oslo_messaging_rabbit')
    notifier = messaging.Notifier(transport, publisher_id='listener-ack',
                                  driver='messaging', topics=[topic])
    endpoint = _Endpoint(seconds, count)
    listener = messaging.get_notification_listener(
        transport, [messaging.Target(topic=topic)], [endpoint],
        executor='threading', allow_requeue=True)
    listener.start(override_pool_size=pool)
    time.sleep(1)
    began = time.monotonic()
    for index in range(count):
        notifier.info({}, 'listener-ack', {'index': index})
    endpoint.done.wait(600)
    took = time.monotonic() - began
    spans = sorted(endpoint.spans)
    gaps = sorted(b[0] - a[1] for a, b in zip(spans, spans[1:]))
    print('prefetch=%d pool=%d handler=%.2fs: %d messages in %.1f s '
          '(%.1f if acknowledged at once); gap p50 %.2f max %.2f s%s' % (
              prefetch, pool, seconds, len(spans), took,
              count * seconds / pool, gaps[len(gaps) // 2], gaps[-1],
              '' if pool == 1 else ' (gaps overlap: pool > 1)'))
    listener.stop()
    listener.wait()
    transport.cleanup()


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
         float(sys.argv[4]), *(int(a) for a in sys.argv[5:6]))
