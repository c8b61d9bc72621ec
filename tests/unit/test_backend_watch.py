"""The worker's backend watch: an idle worker stops, with the backend
named as its failure, once the database or the broker is gone for the
whole retry budget; the broker probe fails fast and never hangs."""

import time

import oslo_messaging as messaging
import pytest

from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha.engine import watch as watch_mod
from inspector_ha.messaging import probe as probe_mod

import backends


@pytest.fixture
def fast(service_conf):
    service_conf.set_override('watch_period', 0.1, group='worker')
    service_conf.set_override('shutdown_timeout', 0.1, group='worker')
    for group in ('queue', 'database'):
        service_conf.set_override('retry_count', 1, group=group)
        service_conf.set_override('retry_timeout', 0.05, group=group)
    return service_conf


def _dead_rabbit():
    return 'rabbit://guest:guest@127.0.0.1:%d/' % backends.free_port()


def _watch_until_stopped(service, timeout=10):
    exits = []
    watch = service.watch(hard_exit=exits.append)
    watch.start()
    assert service.stop.wait(timeout), 'the watch never stopped the service'
    watch.join(timeout)
    assert exits == [1]
    return service.failure


def test_an_in_process_transport_has_no_broker_to_probe(service_conf):
    assert probe_mod.broker_probe(service_conf, 1.0) is None


def test_a_probe_of_a_broker_nobody_listens_for_fails_at_once(
        service_conf):
    service_conf.set_override('transport_url', _dead_rabbit())
    probe = probe_mod.broker_probe(service_conf, 1.0)
    started = time.monotonic()
    with pytest.raises(probe_mod.BrokerUnreachable):
        probe()
    assert time.monotonic() - started < 2.0


def test_a_watch_stops_an_idle_worker_whose_database_is_gone(
        fast, service, tmp_path):
    service.store = db_api.Store(
        'sqlite:///%s/gone/inspector.sqlite' % tmp_path,
        db_api.retry_policy(fast.database, service.stop))
    failure = _watch_until_stopped(service)
    assert isinstance(failure, retry.BackendUnavailable)
    assert failure.backend == 'database'


def test_a_watch_stops_an_idle_worker_whose_broker_is_gone(fast, service):
    fast.set_override('transport_url', _dead_rabbit())
    failure = _watch_until_stopped(service)
    assert isinstance(failure, retry.BackendUnavailable)
    assert failure.backend == 'queue'


def test_a_probe_of_healthy_backends_returns_and_stops_nothing(
        fast, service):
    watch = service.watch(hard_exit=None)
    for _ in range(3):
        watch.probe()
    assert service.failure is None


def test_a_failed_worker_still_running_after_its_grace_is_ended(
        fast, service, tmp_path):
    exits = []
    watch = service.watch(hard_exit=exits.append)
    watch.start()
    service.fail(retry.BackendUnavailable('queue', 'gone'))
    watch.join(10)
    assert exits == [1]


def test_a_worker_stopped_by_sigterm_is_left_to_exit_on_its_own(
        fast, service):
    exits = []
    watch = service.watch(hard_exit=exits.append)
    watch.start()
    service.stop.set()
    watch.join(10)
    assert not watch.is_alive() and exits == []


def test_a_probe_speaks_tls_when_the_driver_is_told_to(service_conf):
    service_conf.set_override('transport_url', _dead_rabbit())
    # NOTE: loading the rabbit driver registers its options; it connects
    # to nothing until used.
    messaging.get_notification_transport(service_conf).cleanup()
    service_conf.set_override('ssl', True, group='oslo_messaging_rabbit')
    service_conf.set_override('ssl_ca_file', '/etc/ssl/certs/ca.pem',
                              group='oslo_messaging_rabbit')
    probe = probe_mod.broker_probe(service_conf, 1.0)
    assert probe._ssl == {'ca_certs': '/etc/ssl/certs/ca.pem',
                          'cert_reqs': probe_mod.ssl.CERT_REQUIRED}


class _CountedStore:
    def __init__(self, answered_at):
        self.answered_at = answered_at
        self.transactions = 0

    def transaction(self, func, *args):
        self.transactions += 1


class _CountedProbe:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1

    def close(self):
        pass


def _watch_answered_at(service, answered_at):
    """A watch whose database last answered and whose broker last
    delivered at ``answered_at``; its store and its broker probe count
    the round trips."""
    store, probe = _CountedStore(answered_at), _CountedProbe()
    policy = retry.RetryPolicy('queue', 1, 0.05, service.stop,
                               (probe_mod.BrokerUnreachable,))
    watch = watch_mod.Watch(store=store, broker=(probe, policy),
                            lifecycle=service.lifecycle,
                            opts=service.conf.worker, hard_exit=None,
                            delivered_at=lambda: answered_at)
    return watch, store, probe


def test_a_watch_spares_the_round_trips_its_workers_work_just_made(
        fast, service):
    # NOTE: an answer "in the future": a stalled test is not a silence.
    watch, store, probe = _watch_answered_at(service, time.monotonic() + 60)
    watch.probe()
    assert (store.transactions, probe.calls) == (0, 0)


def test_a_watch_probes_each_backend_silent_for_a_whole_period(
        fast, service):
    period = fast.worker.watch_period
    watch, store, probe = _watch_answered_at(
        service, time.monotonic() - 2 * period)
    watch.probe()
    assert (store.transactions, probe.calls) == (1, 1)


def test_a_committed_transaction_tells_when_the_database_answered(
        service):
    before = time.monotonic()
    service.store.transaction(db_api.select_one)
    assert service.store.answered_at >= before
