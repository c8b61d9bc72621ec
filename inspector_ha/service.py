"""The one service object: it owns every backend connection.

Built in ``cmd/`` from a ``ConfigOpts``; nothing else in the package keeps
module-level state. ``stop`` is the process-local SIGTERM flag
(``sigterm_flag`` in doc/design.md): every blocking wait and sleep waits
on it.
"""

import logging
import os
import threading

from stevedore import driver

from inspector_ha.common import retry
from inspector_ha.coordination import membership
from inspector_ha.coordination import releases
from inspector_ha.coordination import tooz_backend
from inspector_ha.db import api as db_api
from inspector_ha.engine import periodic
from inspector_ha.engine import throttle
from inspector_ha.engine import worker
from inspector_ha.firewall import base as firewall_base
from inspector_ha.firewall import bus as firewall_bus
from inspector_ha.firewall import manager as firewall_mgr
from inspector_ha.ironic import client as ironic_client
from inspector_ha.messaging import queue
from inspector_ha.processing import pipeline

LOG = logging.getLogger(__name__)
DATA_STORES = 'inspector_ha.introspection_data.store'


class Service:
    def __init__(self, conf):
        self.conf = conf
        self.stop = threading.Event()
        self.failure = None
        self.member_id = '%s.%d' % (conf.host, os.getpid())
        self.store = db_api.Store(
            conf.database.connection,
            db_api.retry_policy(conf.database, self.stop),
            conf.database.max_pool_size,
            conf.database.idle_transaction_timeout)
        self.coordinator = tooz_backend.Coordinator(
            conf.coordination.backend_url, self.member_id,
            tooz_backend.retry_policy(conf.coordination, self.stop),
            conf.coordination.lease_timeout)
        self.releases = releases.Releases(
            self.coordinator, conf.pin_release_version,
            conf.coordination.lease_timeout)
        self.transport = queue.get_transport(conf)
        if 'oslo_messaging_rabbit' in conf:
            # One unacknowledged message per worker thread.
            conf.set_default('rabbit_qos_prefetch_count', 1,
                             group='oslo_messaging_rabbit')
            # NOTE: the driver's option is whole seconds, at least 1.
            conf.set_default('rabbit_retry_interval',
                             max(1, round(conf.queue.retry_timeout)),
                             group='oslo_messaging_rabbit')
        self.publisher = queue.Publisher(self.transport, conf.queue.topic,
                                         self.member_id,
                                         conf.queue.retry_count,
                                         self.releases.object_version)
        self.ironic = ironic_client.connect(conf, self.stop)
        self.pipeline = pipeline.Pipeline(conf)
        self.data_store = driver.DriverManager(
            DATA_STORES, conf.processing.store_data,
            invoke_on_load=True).driver
        self.throttle = throttle.RebootThrottle(
            self.coordinator, conf.worker.reboot_throttle, self.stop)
        self._consumer = None
        self.membership = None
        self.leader_tasks = []
        self.firewall = None
        self.bus = None

    def start(self, workers=True, periodic_tasks=True, firewall=None):
        """Start what this process runs; ``firewall`` defaults to
        ``workers`` (API-only processes take no part in the PXE
        firewall) and needs a ``[pxe_filter] driver`` other than noop."""
        self.coordinator.start()
        if workers and self.conf.pxe_filter.whitelist_pubsub:
            self.bus = firewall_bus.Bus(self.conf, self.member_id,
                                       self.releases)
        if firewall is None:
            firewall = workers
        if firewall and self.conf.pxe_filter.driver != 'noop':
            self._start_firewall()
        if workers:
            self._consumer = queue.Consumer(
                self.transport, self.conf.queue.topic,
                worker.Worker(self).handle, self.conf.worker.pool_size,
                self.conf.worker.queue_get_timeout, self.stop,
                self.conf.worker.requeue_delay)
            self._consumer.start()
            worker.Watch(self).start()
        roles = ['api'] if not workers else ['worker']
        self.membership = membership.Membership(self, roles,
                                                self.reset_leaderships)
        self.membership.enter()
        self.membership.start()
        if periodic_tasks:
            self.leader_tasks = periodic.tasks(self)
            for task in self.leader_tasks:
                task.start()

    def _start_firewall(self):
        if self.bus is None:
            self.bus = firewall_bus.Bus(self.conf, self.member_id,
                                       self.releases)
        self.firewall = firewall_mgr.Firewall(
            self, firewall_base.load(self.conf, self.stop), self.bus)
        self.firewall.start()
        firewall_mgr.BlacklistSync(self, self.firewall.lists).start()

    def announce_whitelist(self, op, node_uuid, macs):
        """Tell the firewall party a node's MACs are (no longer) under
        introspection (best effort; store polling repairs a loss)."""
        if self.bus is not None:
            self.bus.whitelist(op, node_uuid, macs)

    def reset_leaderships(self):
        """The group shrank: every leadership is given up and re-run."""
        for task in self.leader_tasks:
            task.reset.set()
        if self.firewall is not None:
            self.firewall.reset.set()
            self.firewall.lists.changed.set()

    def fail(self, exc):
        """A backend is gone for good: stop the whole process.

        ``Interrupted`` only follows a stop already under way (SIGTERM, or
        another failure): it is no failure of its own.
        """
        if self.failure is None and not isinstance(exc, retry.Interrupted):
            LOG.error('Stopping the service: %s', exc)
            self.failure = exc
        self.stop.set()

    def shutdown(self):
        self.stop.set()
        if self._consumer is not None:
            self._consumer.wait(self.conf.worker.shutdown_timeout)
        self.reset_leaderships()
        for thread in self.leader_tasks:
            thread.join(timeout=self.conf.worker.shutdown_timeout)
        if self.firewall is not None:
            self.firewall.lists.changed.set()
            self.firewall.join(timeout=self.conf.worker.shutdown_timeout)
        if self.bus is not None:
            self.bus.close()
        if self.membership is not None:
            self.membership.join(timeout=self.conf.worker.shutdown_timeout)
            self.membership.leave()
        self.publisher.close()
        self.coordinator.stop()
        self.transport.cleanup()
        self.store.dispose()
