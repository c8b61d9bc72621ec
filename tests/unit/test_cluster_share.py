"""[worker] cluster_concurrency: each worker process handles at most its
share of the cluster's budget, the budget divided by the live workers;
only the threads the share admits hold a listener and take requests
(doc/guarantees.md I1)."""

import contextlib
import threading
import time
import uuid as uuidlib

import oslo_messaging as messaging
import pytest

from inspector_ha.messaging import cluster_share
from inspector_ha.messaging import objects
from inspector_ha.messaging import queue
from inspector_ha import service as service_mod

import backends
import members as members_mod


@pytest.mark.parametrize('budget, workers, pool_size, share', [
    (0, 3, 8, 8),      # no budget: the whole pool
    (3, 3, 2, 1),
    (3, 2, 2, 2),      # 3 / 2 rounded up
    (4, 1, 2, 2),      # never more than the pool
    (2, 5, 4, 1),      # at least one
    (6, 0, 8, 6),      # before the count: as if alone
])
def test_a_worker_takes_the_budget_divided_by_the_live_workers_rounded_up(
        budget, workers, pool_size, share):
    assert cluster_share.share_of(budget, workers, pool_size) == share


def test_with_no_budget_every_thread_of_the_pool_is_admitted():
    share = cluster_share.ClusterShare(0, 4)
    assert [share.admits(i) for i in range(5)] == [True] * 4 + [False]


def test_with_a_budget_one_thread_is_admitted_until_the_workers_are_counted():
    share = cluster_share.ClusterShare(6, 4)
    assert share.slots == 1
    share.resize_for(2)
    assert share.slots == 3


def test_a_thread_waiting_for_the_share_is_admitted_as_soon_as_it_grows():
    share = cluster_share.ClusterShare(4, 4)
    admitted = []
    waiter = threading.Thread(
        target=lambda: admitted.append(share.admits(2, timeout=10)))
    waiter.start()
    time.sleep(0.1)
    began = time.monotonic()
    share.resize_for(1)
    waiter.join(10)
    assert admitted == [True] and time.monotonic() - began < 1


class _Handled:
    """A handler that records which thread took each request and how many
    ran at once."""

    def __init__(self, seconds):
        self._seconds = seconds
        self._lock = threading.Lock()
        self.threads = []
        self.running = 0
        self.peak = 0

    def __call__(self, request):
        with self._lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.threads.append(threading.current_thread().name)
        time.sleep(self._seconds)
        with self._lock:
            self.running -= 1
        return True


def _publish(service_conf, count):
    publisher = queue.Publisher(
        transport=messaging.get_notification_transport(service_conf),
        topic='share-test', publisher_id='unit', retry=None)
    for _ in range(count):
        publisher.publish(str(uuidlib.uuid4()), str(uuidlib.uuid4()),
                          'start')
    publisher.close()


@contextlib.contextmanager
def _consuming(service_conf, handled, share, pool_size, **extra):
    """A real consumer (in-process transport) of ``pool_size`` threads
    taking requests into ``handled`` within ``share``; stopped after."""
    stop = threading.Event()
    consumer = queue.Consumer(
        transport=messaging.get_notification_transport(service_conf),
        topic='share-test', handler=handled, pool_size=pool_size,
        get_timeout=extra.pop('get_timeout', 0.1), stop=stop, share=share,
        **extra)
    consumer.start()
    try:
        yield consumer
    finally:
        stop.set()
        consumer.wait(10)


def test_only_the_share_of_requests_is_handled_at_once_as_it_grows_and_shrinks(
        service_conf):
    handled = _Handled(0.05)
    share = cluster_share.ClusterShare(3, 3)
    with _consuming(service_conf, handled, share, 3):
        _publish(service_conf, 6)
        backends.wait_for(lambda: len(handled.threads) == 6, 10)
        assert handled.peak == 1
        share.resize_for(1)
        _publish(service_conf, 12)
        backends.wait_for(lambda: len(handled.threads) == 18, 10)
        assert handled.peak == 3
        share.resize_for(3)
        handled.peak = 0
        _publish(service_conf, 6)
        backends.wait_for(lambda: len(handled.threads) == 24, 10)
        assert handled.peak == 1


def test_a_request_delivered_while_every_slot_is_busy_is_held_first(
        service_conf):
    """Held (its holder named in SQL) before it waits, so that a take-over
    sees it if this worker freezes with it in hand (D3c)."""
    handled = _Handled(0.3)
    held = []
    share = cluster_share.ClusterShare(0, 1)
    with _consuming(service_conf, handled, share, 1, window=3,
                    get_timeout=5, hold=held.append):
        _publish(service_conf, 3)
        backends.wait_for(lambda: len(handled.threads) == 3, 10)
    assert handled.peak == 1
    assert len(held) == 2
    assert all(isinstance(r, objects.TransitionRequest) for r in held)


def test_a_worker_process_resizes_its_share_when_another_worker_joins(
        service_conf, tmp_path):
    service_conf.set_override('cluster_concurrency', 4, group='worker')
    service_conf.set_override('pool_size', 8, group='worker')
    service_conf.set_override('watch_period', 0.1, group='coordination')
    svc = service_mod.Service(service_conf)
    other = None
    try:
        svc.start(workers=True, periodic_jobs=False)
        assert svc.share.slots == 4
        other = members_mod.coordinator_at(
            'file://%s' % (tmp_path / 'coordination'))
        members_mod.member(other).enter()
        backends.wait_for(lambda: svc.share.slots == 2, 5)
        assert svc._shown()['slots'] == 2  # inspector-ha-status shows it
    finally:
        if other is not None:
            other.stop()
        svc.shutdown()


class _Message:
    def __init__(self):
        self.fate = None

    def requeue(self):
        self.fate = 'requeued'


def test_a_message_polled_as_the_share_shrank_below_the_thread_is_put_back():
    share = cluster_share.ClusterShare(3, 3)
    share.resize_for(1)
    handled = _Handled(0)
    consumer = queue.Consumer(transport=None, topic='share-test',
                              handler=handled, pool_size=3, get_timeout=0.1,
                              stop=threading.Event(), share=share)
    share.resize_for(3)
    message = _Message()
    consumer._admitted_one(2, message)
    assert message.fate == 'requeued' and handled.threads == []
