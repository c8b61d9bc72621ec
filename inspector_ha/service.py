"""The service object: it builds each component and wires them together.

Built in ``cmd/`` (and ``wsgi.py``) from a ``ConfigOpts``; nothing else
in the package keeps module-level state. It owns every backend
connection (the store, the coordinator, the messaging transport, the
Ironic client) and hands each component only what that component uses:
the store, the :class:`~inspector_ha.common.lifecycle.Lifecycle` (the
process-local stop flag, ``sigterm_flag`` in doc/design.md, and its
first failure), its own option group, the publisher, a coordinator
method. No component receives the service.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from stevedore import driver

from inspector_ha.common import lifecycle
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.coordination import election
from inspector_ha.coordination import membership
from inspector_ha.coordination import releases
from inspector_ha.coordination import tooz_backend
from inspector_ha.db import api as db_api
from inspector_ha.engine import claims
from inspector_ha.engine import leadership
from inspector_ha.engine import periodic
from inspector_ha.engine import tasks
from inspector_ha.engine import throttle
from inspector_ha.engine import watch as watch_mod
from inspector_ha.engine import worker
from inspector_ha.firewall import base as firewall_base
from inspector_ha.firewall import bus as firewall_bus
from inspector_ha.firewall import manager as firewall_mgr
from inspector_ha.firewall import sources
from inspector_ha.firewall import watcher
from inspector_ha.ironic import client as ironic_client
from inspector_ha.ironic import pacing
from inspector_ha.messaging import cluster_share
from inspector_ha.messaging import probe
from inspector_ha.messaging import queue
from inspector_ha.processing import pipeline

if TYPE_CHECKING:
    from oslo_config import cfg

    # NOTE: aliased: Service's election() hides the module in its body.
    from inspector_ha.coordination import election as election_mod

DATA_STORES = 'inspector_ha.introspection_data.store'


class Service:
    """Every backend connection of one process, and what it runs.

    ``start`` runs the workers, the periodic leaders, the firewall and
    the membership this process takes part in; ``shutdown`` stops them
    in order and closes the connections.
    """

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.lifecycle = lifecycle.Lifecycle()
        self.member_id = membership.new_member_id(conf.host)
        self.store = _store(conf, self.stop)
        self.coordinator = _coordinator(conf, self.member_id, self.stop)
        self.releases = releases.Releases(
            self.coordinator, conf.pin_release_version,
            conf.coordination.lease_timeout)
        self.transport = queue.get_transport(conf)
        _tune_rabbit(conf)
        self.publisher = queue.publisher(self.transport, conf.queue.topic,
                                         self.member_id,
                                         conf.queue.retry_count,
                                         self.releases.object_version)
        self.ironic = ironic_client.connect(conf, self.stop)
        #: The thread reading Ironic's version document at start.
        self.discovery: threading.Thread | None = None
        self.pipeline = pipeline.Pipeline(conf)
        # NOTE: stevedore's types infer no plugin type from a namespace.
        self.data_store: Any = driver.DriverManager(
            DATA_STORES, conf.processing.store_data,
            invoke_on_load=True).driver
        #: How many Ironic calls this worker process's tasks make at once.
        self.pacing: pacing.Pacing | None = None
        self.throttle = throttle.RebootThrottle(
            self.coordinator, conf.worker.reboot_throttle, self.stop)
        self._consumer: queue.Consumer | None = None
        #: This worker process's share of [worker] cluster_concurrency.
        self.share: cluster_share.ClusterShare | None = None
        self.membership: membership.Membership | None = None
        self.leader_loops: list[leadership.LeaderLoop] = []
        self.firewall: firewall_mgr.Firewall | None = None
        self.bus: firewall_bus.Bus | None = None

    @property
    def stop(self) -> threading.Event:
        """The process's stop flag (set on SIGTERM or a failure)."""
        return self.lifecycle.stop

    @property
    def failure(self) -> BaseException | None:
        """The backend failure that stopped the process, or None."""
        return self.lifecycle.failure

    def fail(self, exc: BaseException) -> None:
        self.lifecycle.fail(exc)

    def start(self, workers: bool = True, periodic_jobs: bool = True,
              firewall: bool | None = None) -> None:
        """Start what this process runs; ``firewall`` defaults to
        ``workers`` (API-only processes take no part in the PXE
        firewall) and needs a ``[pxe_filter] driver`` other than noop."""
        self.coordinator.start()
        self.discovery = self.ironic.discover()
        if firewall is None:
            firewall = workers
        # NOTE: in-process messaging reaches this process alone: its
        # announcements are heard only by its own firewall, which makes
        # the bus it listens on.
        if (workers and self.conf.pxe_filter.whitelist_pubsub and
                not queue.in_process(self.conf)):
            self.bus = self._bus()
        if firewall and self.conf.pxe_filter.driver != 'noop':
            self._start_firewall()
        if workers:
            self._start_workers()
        self.membership = membership.Membership(
            coordinator=self.coordinator, lifecycle=self.lifecycle,
            opts=self.conf.coordination, host=self.conf.host,
            roles=self._roles(workers), on_shrink=self.group_shrank,
            shown=self._shown, on_workers=self._on_workers(),
            leads=periodic_jobs or self.firewall is not None,
            on_rejoin=self._rejoined)
        self.membership.enter()
        self.membership.start()
        self._rejoined()
        if periodic_jobs:
            self.leader_loops = self._leader_loops()
            for loop in self.leader_loops:
                loop.start()

    def _roles(self, workers: bool) -> list[str]:
        """This member's roles in its capabilities."""
        roles = ['worker'] if workers else ['api']
        if self.firewall is not None:
            roles.append(membership.FIREWALL_ROLE)
        return roles

    def tasks(self) -> tasks.Tasks:
        """The tasks bound to transitions, as a worker runs them."""
        ironic = (self.ironic if self.pacing is None
                  else self.ironic.paced(self.pacing))
        return tasks.Tasks(
            ironic=ironic, store=self.store,
            announce=self.announce_whitelist, throttle=self.throttle,
            pipeline=self.pipeline, data_store=self.data_store,
            conf=self.conf, claims=claims.Claims(
                store=self.store,
                window=self.conf.coordination.lease_timeout,
                stop=self.lifecycle.stop))

    def worker(self) -> worker.Worker:
        """A worker: its ``handle`` takes one delivered request."""
        return worker.Worker(
            store=self.store, node_lock=self.coordinator.node_lock,
            tasks=self.tasks(), announce=self.announce_whitelist,
            lifecycle=self.lifecycle, opts=self.conf.worker,
            actor=self.member_id)

    def watch(self, hard_exit: Callable[[int], object] = os._exit
              ) -> watch_mod.Watch:
        """The backend watch of an (idle) worker process."""
        conf = self.conf
        check = probe.broker_probe(conf, conf.queue.probe_timeout)
        broker = None if check is None else (check, retry.RetryPolicy(
            'queue', conf.queue.retry_count, conf.queue.retry_timeout,
            self.stop, (probe.BrokerUnreachable,)))
        return watch_mod.Watch(
            store=self.store, broker=broker, lifecycle=self.lifecycle,
            opts=conf.worker, hard_exit=hard_exit,
            delivered_at=self._delivered_at)

    def election(self, name: str) -> election_mod.Election:
        """This member's campaign for the leadership ``name``."""
        return election.Election(name, self.coordinator, self.store)

    def campaign(self) -> election_mod.Campaign:
        """When a leadership this member does not hold is tried for: fast
        for as long as a gone member's lock may outlive its membership."""
        coordination = self.conf.coordination
        return election.Campaign(
            self.conf.periodic.campaign_period,
            self.conf.periodic.steady_campaign_period,
            coordination.lease_timeout + coordination.watch_period)

    def list_ports(self, after: str | None = None
                   ) -> list[tuple[str, str]]:
        """Ironic's ports as the black-list takes them."""
        return sources.ironic_ports(
            self.ironic, self.conf.pxe_filter.ethoib_interfaces, after=after)

    def _on_workers(self) -> Callable[[int], None] | None:
        """What learns the number of live workers: this worker's share of
        [worker] cluster_concurrency and its pacing's share of
        least_ironic_calls, where either is set; None when neither is."""
        learners: list[cluster_share.ClusterShare | pacing.Pacing] = []
        if self._shares_concurrency():
            # NOTE: cast: _shares_concurrency() says it is set.
            learners.append(cast(cluster_share.ClusterShare, self.share))
        if self.pacing is not None and self.pacing.cluster_least > 1:
            learners.append(self.pacing)
        if not learners:
            return None

        def learn(workers: int) -> None:
            for learner in learners:
                learner.resize_for(workers)
        return learn

    def _shares_concurrency(self) -> bool:
        return (self.share is not None
                and bool(self.conf.worker.cluster_concurrency))

    def _start_workers(self) -> None:
        opts = self.conf.worker
        self.share = cluster_share.ClusterShare(opts.cluster_concurrency,
                                                opts.pool_size)
        self.pacing = _pacing(opts, self.stop)
        handling = self.worker()
        self._consumer = queue.Consumer(
            transport=self.transport, topic=self.conf.queue.topic,
            handler=handling.handle, hold=handling.hold,
            pool_size=opts.pool_size, window=_prefetch_window(self.conf),
            get_timeout=opts.queue_get_timeout, stop=self.stop,
            requeue_delay=opts.requeue_delay, share=self.share)
        self._consumer.start()
        self.watch().start()

    def _delivered_at(self) -> float:
        """When this worker's consumer last got a message (0: never)."""
        return 0.0 if self._consumer is None else self._consumer.delivered_at

    def _leader_loops(self) -> list[leadership.LeaderLoop]:
        """The periodic leaders this configuration enables."""
        found = [self._leader_loop(name, period, job) for name, period, job
                 in periodic.jobs(self.conf, self.store, self.publisher,
                                  self.ironic)]
        if self.conf.worker.take_over_period and not queue.in_process(
                self.conf):
            # NOTE: its runs are not logged: it runs every second, and
            # writes (fenced) only when a member's lease lapsed. With the
            # process's own queue (the embedded default) no other member
            # could take anything over.
            found.append(self._leader_loop(
                'take_over', self.conf.worker.take_over_period,
                periodic.TakeOver(
                    store=self.store, publisher=self.publisher,
                    members=self._member_ids,
                    workers=functools.partial(self._member_ids,
                                              membership.WORKERS),
                    me=self.member_id,
                    period=self.conf.worker.take_over_period,
                    longest=self.conf.worker.redrive_after),
                log_runs=False))
        if self.firewall is not None:
            found += self._firewall_leader_loops(self.conf.pxe_filter)
        return found

    def _member_ids(self, group: bytes = membership.GROUP) -> list[str]:
        """A group's members (by default the member group; none if it
        does not exist yet), listed under the coordination retry policy:
        a backend gone is then ``coordination unavailable`` (the worker
        stops) instead of a traceback a second from the take_over job."""
        return [member.decode() for member in self.coordinator.call(
            self.coordinator.member_ids, group, absent_ok=True)]

    def _firewall_leader_loops(self, opts: Any
                               ) -> list[leadership.LeaderLoop]:
        """The port watcher, and with pub-sub the black-list lister.
        They write nothing, so their (frequent) runs are not logged."""
        found = []
        # NOTE: cast: called with a firewall, started with its bus.
        bus = cast(firewall_bus.Bus, self.bus)
        if opts.port_watch_period:
            found.append(self._leader_loop(
                'port_watch', opts.port_watch_period,
                watcher.PortWatcher(bus, self.list_ports),
                log_runs=False))
        if opts.blacklist_pubsub and opts.blacklist_list_period:
            found.append(self._leader_loop(
                'blacklist_list', opts.blacklist_list_period,
                watcher.BlacklistLister(bus, self.list_ports),
                log_runs=False))
        return found

    def _leader_loop(self, name: str, period: float,
                     job: Callable[[election_mod.Fence], object],
                     log_runs: bool = True) -> leadership.LeaderLoop:
        return leadership.LeaderLoop(
            election=self.election(name), period=period, job=job,
            lifecycle=self.lifecycle, campaign=self.campaign(),
            log_runs=log_runs)

    def _bus(self) -> firewall_bus.Bus:
        return firewall_bus.Bus(self.conf, self.member_id, self.releases)

    def _start_firewall(self) -> None:
        """Start the firewall party (its start-up blocks PXE); the roles
        of this member name it."""
        if self.bus is None:
            self.bus = self._bus()
        self.firewall = firewall_mgr.Firewall(
            driver=firewall_base.load(self.conf, self.stop), bus=self.bus,
            election=self.election(firewall_mgr.LEADERSHIP),
            store=self.store, lifecycle=self.lifecycle,
            opts=self.conf.pxe_filter, campaign=self.campaign(),
            catch_up=releases.counted_after(
                self.conf.coordination.lease_timeout))
        self.firewall.start()
        firewall_mgr.BlacklistSync(
            self.firewall.lists, self.list_ports,
            self.conf.pxe_filter.sync_period, self.stop,
            follow_for=firewall_mgr.follow_for(self.conf.pxe_filter)).start()

    def _shown(self) -> dict[str, Any]:
        """What this member shows in the group besides who it is: the
        fenced writes of its leaderships, its firewall state, its share
        of [worker] cluster_concurrency."""
        shown: dict[str, Any] = {'fenced_writes': {t.job_name: t.fenced_writes
                                                   for t in self.leader_loops
                                                   if t.fenced_writes}}
        if self._shares_concurrency():
            # NOTE: cast: _shares_concurrency() says it is set.
            shown['slots'] = cast(cluster_share.ClusterShare, self.share).slots
        if self.firewall is not None:
            shown['firewall'] = {k: v for k, v in
                                 self.firewall.describe().items()
                                 if k != 'lease_remaining'}
        return shown

    def announce_whitelist(self, op: str, node_uuid: str,
                           macs: Iterable[str]) -> None:
        """Tell the firewall party a node's MACs are (no longer) under
        introspection (best effort; store polling repairs a loss)."""
        if self.bus is not None:
            self.bus.whitelist(op, node_uuid, macs)

    def group_shrank(self) -> None:
        """A member left: the leaderships are run again, and the next
        publication reads every member's release again (one that comes
        back under the same id may run another)."""
        self.releases.forget()
        self.reset_leaderships()

    def _rejoined(self) -> None:
        """This member joined the group, at start or again after it was
        dropped: the workers count its firewall only from now."""
        if self.firewall is not None:
            self.firewall.catch_up()

    def reset_leaderships(self) -> None:
        """The group shrank: every leadership is given up and re-run."""
        for loop in self.leader_loops:
            loop.reset.set()
        if self.firewall is not None:
            self.firewall.interrupt()

    def shutdown(self) -> None:
        self.stop.set()
        timeout = self.conf.worker.shutdown_timeout
        if self._consumer is not None:
            self._consumer.wait(timeout)
        self.reset_leaderships()
        for thread in self.leader_loops:
            thread.join(timeout=timeout)
        if self.firewall is not None:
            self.firewall.lists.changed.set()
            self.firewall.join(timeout=timeout)
        if self.bus is not None:
            self.bus.close()
        if self.membership is not None:
            self.membership.join(timeout=timeout)
            self.membership.leave()
        self.publisher.close()
        self.coordinator.stop()
        self.transport.cleanup()
        self.store.dispose()
        self.lifecycle.done.set()


def _pacing(opts: Any, stop: threading.Event) -> pacing.Pacing | None:
    """The tasks' limit on Ironic calls at once, or None (disabled)."""
    if not opts.pace_ironic:
        metrics.IRONIC_CALLS_AT_ONCE.set(opts.pool_size)
        return None
    return pacing.Pacing(opts.pool_size, opts.ironic_slowdown, stop,
                         cluster_least=opts.least_ironic_calls)


def _store(conf: cfg.ConfigOpts, stop: threading.Event) -> db_api.Store:
    return db_api.Store(
        conf.database.connection, db_api.retry_policy(conf.database, stop),
        pool=db_api.Pool.from_conf(conf.database),
        idle_timeout=conf.database.idle_transaction_timeout,
        sqlite_synchronous=conf.database.sqlite_synchronous)


def _coordinator(conf: cfg.ConfigOpts, member_id: str,
                 stop: threading.Event) -> tooz_backend.Coordinator:
    return tooz_backend.Coordinator(
        conf.coordination.backend_url, member_id,
        tooz_backend.retry_policy(conf.coordination, stop),
        conf.coordination.lease_timeout)


def _prefetch_window(conf: cfg.ConfigOpts) -> int:
    """How many unacknowledged messages RabbitMQ hands one worker (0:
    not RabbitMQ, or no limit set)."""
    if 'oslo_messaging_rabbit' not in conf:
        return 0
    return int(conf.oslo_messaging_rabbit.rabbit_qos_prefetch_count)


def _tune_rabbit(conf: cfg.ConfigOpts) -> None:
    """oslo.messaging's RabbitMQ driver options this service needs."""
    if 'oslo_messaging_rabbit' not in conf:
        return
    # NOTE: twice the pool: the listener acknowledges between polls, and
    # a window as large as the pool left each slot waiting for that
    # (benchmarks/results/2026-12-07-listener-ack.md).
    conf.set_default('rabbit_qos_prefetch_count', 2 * conf.worker.pool_size,
                     group='oslo_messaging_rabbit')
    # NOTE: the driver's option is whole seconds, at least 1.
    conf.set_default('rabbit_retry_interval',
                     max(1, round(conf.queue.retry_timeout)),
                     group='oslo_messaging_rabbit')
