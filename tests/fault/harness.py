"""A cluster under fault: 2 API processes behind HAProxy, 3 workers, a
private RabbitMQ, Redis and MariaDB (PostgreSQL for the soak), a real
Ironic, and a batch of introspections played by simulated ramdisks that
retry like ironic-python-agent 13.

Workers and API processes that exit are restarted by a supervisor thread,
as systemd would (``Restart=always``): a worker that lost a backend for its
whole retry budget exits non-zero by design and is meant to be restarted.
"""

import collections
import dataclasses
import pathlib
import re
import threading
import time

import requests
import sqlalchemy as sa

from inspector_ha.conf import worker as worker_conf

import backends
from servers import log_tail
import batch
import cluster as cluster_mod
import haproxy as haproxy_mod
import cutoff as cutoff_mod
import proxy as proxy_mod
import ramdisk

#: Settings of the cluster under fault: budgets that ride out a restart
#: of each backend (RabbitMQ takes about 7 s) and fast periodic work. The
#: AMQP heartbeat is oslo.messaging's (60 s), as in production: a frozen
#: worker's requests are taken over when its coordination lease lapses.
CONF = {
    'DEFAULT': {'clean_up_period': 2},
    'worker': {'reboot_throttle': 0.2, 'redrive_after': 5,
               'redrive_period': 1, 'shutdown_timeout': 5,
               'watch_period': 0.5, 'max_deliveries': 10},
    'queue': {'retry_count': 12, 'retry_timeout': 1},
    'database': {'retry_count': 10, 'retry_timeout': 0.5},
    'coordination': {'retry_count': 3, 'retry_timeout': 1},
    'periodic': {'ironic_sync_period': 5, 'data_cleanup_period': 5},
}
FINAL = ('finished', 'error')
#: The fault-injection module a worker may be started with.
FAILPOINT = pathlib.Path(__file__).resolve().parent / 'failpoint'


def _port(url):
    """The loopback port ``url`` names."""
    return int(re.search(r'127\.0\.0\.1:(\d+)', url).group(1))


def _defaults():
    """The options the test clusters' base configuration speeds up (the
    outbox's re-drive), back at their defaults."""
    return {'worker': {opt.name: opt.default for opt in worker_conf.OPTS
                       if opt.name in ('redrive_after', 'redrive_period')}}


@dataclasses.dataclass
class Servers:
    """The private backends, shared by the tests of a session."""
    rabbit: object
    redis: object
    database: object

    def ensure_running(self):
        for server in (self.rabbit, self.redis, self.database):
            server.start()


class Harness:
    def __init__(self, workdir, ironic, servers, nodes=20, conf=None,
                 proxied=False, defaults=False, database=None,
                 coordination=None, cut_off=False, freeze_after=None):
        """``defaults``: every option at its default (not :data:`CONF`)
        but those of ``conf``; ``database`` and ``coordination`` (URLs)
        replace the private MariaDB and Redis; ``cut_off``: the third
        worker runs on a host that can be cut off the network
        (:mod:`cutoff`), as :attr:`cut_off`; ``freeze_after`` (an effect
        such as ``power-on``): the third worker stops itself right after
        its first claim of it (``failpoint/sitecustomize.py``), as
        :attr:`failpoint`, writing the node to :attr:`freeze_mark`."""
        self.ironic = ironic
        self.servers = servers
        self.database = database or servers.database.new_database()
        self.coordination = coordination or '%s?namespace=%s' % (
            servers.redis.url, backends.unique_name())
        topic = {'queue': {'topic': backends.unique_name('requests')}}
        self.cluster = cluster_mod.Cluster(
            workdir, self.database, servers.rabbit.url, self.coordination,
            ironic.url, apis=2,
            workers=2 if proxied or cut_off or freeze_after else 3,
            conf=cluster_mod._merge(cluster_mod._merge(
                _defaults() if defaults else CONF, topic), conf or {}))
        self.count = nodes
        self.nodes = {}
        self.silent = None
        self.haproxy = None
        self.proxy = proxy_mod.Proxy(servers.redis.port) if proxied else None
        self.proxied = None
        self.cutoff = cutoff_mod.CutOff([_port(u) for u in (
            servers.rabbit.url, self.database, self.coordination,
            ironic.url)]) if cut_off else None
        self.cut_off = None
        self.freeze_after = freeze_after
        self.freeze_mark = pathlib.Path(workdir) / 'frozen-node'
        self.failpoint = None
        self.supervisor = Supervisor(self.cluster)
        self.engine = sa.create_engine(self.database,
                                       pool_pre_ping=True)
        self.stopped = False

    # --- life cycle -----------------------------------------------------

    def start(self):
        creating = Background(batch.create_nodes, self.ironic, self.count)
        self.cluster.start()
        if self.proxy is not None:
            self._add_proxied_worker()
        if self.cutoff is not None:
            self._add_cut_off_worker()
        if self.freeze_after is not None:
            self.failpoint = self.cluster.add_worker(env={
                'PYTHONPATH': str(FAILPOINT),
                'INSPECTOR_HA_FREEZE_AFTER_CLAIM': self.freeze_after,
                'INSPECTOR_HA_FREEZE_MARK': str(self.freeze_mark)})
        self.haproxy = haproxy_mod.HAProxy(self.cluster.api_urls).start()
        self.nodes = creating.result(300)
        self._wait_started(self.cluster.workers, True)
        self.supervisor.start()
        return self

    def _add_proxied_worker(self):
        """The third worker reaches Redis through a proxy that a test can
        blackhole (a partition of that worker from coordination)."""
        self.proxy.start()
        url = self.coordination.replace(':%d?' % self.servers.redis.port,
                                        ':%d?' % self.proxy.port)
        self.proxied = self.cluster.add_worker(
            {'coordination': {'backend_url': url}})

    def _add_cut_off_worker(self):
        """The third worker runs in a network namespace of its own and
        reaches every backend through its link, which a test can take
        down."""
        cut = self.cutoff.start()
        self.cut_off = self.cluster.add_worker({
            'DEFAULT': {'transport_url': cut.url(self.servers.rabbit.url)},
            'database': {'connection': cut.url(self.database)},
            'coordination': {'backend_url': cut.url(self.coordination)},
            'ironic': {'endpoint_override': cut.url(self.ironic.url)}},
            prefix=cut.prefix)

    def stop(self):
        """Stop everything; return {process name: exit code}."""
        self.stopped = True
        if self.supervisor.is_alive():
            self.supervisor.stop()
        self._wait_started(self.cluster.workers + self.cluster.apis, False)
        codes = self.cluster.stop()
        if self.haproxy is not None:
            self.haproxy.stop()
        if self.proxy is not None:
            self.proxy.close()
        if self.cutoff is not None:
            self.cutoff.close()
        self.engine.dispose()
        for uuid in self.nodes:
            self.ironic.request('DELETE', '/v1/nodes/%s' % uuid,
                                expect=(204, 404, 409))
        return codes

    @property
    def url(self):
        return self.haproxy.url

    # --- the batch ------------------------------------------------------

    def run_batch(self, inject=None, timeout=240, silent=False):
        """Start every node, play the ramdisks and wait for the end.

        ``inject(harness)`` runs on a thread of its own while the batch
        runs and returns a ``faults.Fault``. ``silent``: one node
        (``self.silent``) gets no ramdisk.
        """
        played = dict(self.nodes)
        if silent:
            self.silent = played.popitem()[0]
        self._power_off(played)
        disks = ramdisk.Ramdisks(self.ironic.url, [self.url], played,
                                 **ramdisk.IPA13)
        driver = Driver(self.url)
        fault = Background(inject, self) if inject else None
        disks.start()
        try:
            driver.start_all(list(self.nodes))
            injected = fault.result(timeout) if fault else None
            self.wait_final(driver.accepted, timeout)
        finally:
            disks.stop()
        return driver, injected

    def _power_off(self, uuids):
        """The simulated ramdisk posts when it sees its node on, so each
        node starts off, as one that a previous attempt left on (an error
        does not power off) would be after the reboot."""
        listing = self.ironic.request('GET', '/v1/nodes', params={
            'fields': 'uuid,power_state', 'limit': 1000})['nodes']
        on = [n['uuid'] for n in listing
              if n['uuid'] in uuids and n['power_state'] == 'power on']
        for uuid in on:
            self.ironic.request('PUT', '/v1/nodes/%s/states/power' % uuid,
                                expect=(202,), json={'target': 'power off'})
        for uuid in on:
            backends.wait_for(lambda: self.ironic.power_state(uuid) ==
                              'power off', 30, interval=0.1)

    def wait_final(self, uuids, timeout):
        try:
            backends.wait_for(lambda: self._all_final(uuids), timeout,
                              interval=0.5)
        except TimeoutError:
            raise AssertionError('not all final after %s s: %s\n%s' % (
                timeout, collections.Counter(self.states(uuids).values()),
                batch.ledger(self.database, uuids))) from None

    def _all_final(self, uuids):
        states = self.states(uuids)
        return len(states) == len(set(uuids)) and all(
            s in FINAL for s in states.values())

    def batch_over(self):
        return self._all_final(self.nodes)

    def states(self, uuids):
        rows = self.query('SELECT uuid, state FROM nodes')
        return {r.uuid: r.state for r in rows if r.uuid in set(uuids)}

    def progress(self, state='waiting'):
        """How many transitions into ``state`` are committed."""
        return self.query('SELECT count(*) AS n FROM transitions '
                          'WHERE to_state = :s', s=state)[0].n

    def wait_progress(self, at_least, state='waiting', timeout=120):
        backends.wait_for(lambda: self.progress(state) >= at_least,
                          timeout, interval=0.05,
                          message='the batch made no progress')

    def progress_mark(self):
        """The id of the last committed transition."""
        return self.query('SELECT coalesce(max(id), 0) AS n FROM '
                          'transitions')[0].n

    def progress_any(self):
        return self.query('SELECT count(*) AS n FROM transitions')[0].n

    def query(self, sql, **params):
        """Rows of ``sql``; retried while the database restarts (one of
        the faults), for up to a minute."""
        return self._retried(lambda: self._query(sql, params))

    def _query(self, sql, params):
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).all()

    def execute(self, sql, **params):
        def once():
            with self.engine.begin() as conn:
                conn.execute(sa.text(sql), params)
        self._retried(once)

    @staticmethod
    def _retried(func, timeout=60):
        # NOTE: the 1-tuple is truthy even when func's result is not.
        return backends.wait_for(lambda: (func(),), timeout, interval=0.2,
                                 ignore=(sa.exc.DBAPIError,))[0]

    # --- processes ------------------------------------------------------

    def alive_workers(self):
        return [w for w in self.cluster.workers if w.poll() is None]

    def process_of(self, member):
        """The process of a member id (``<name>.<pid>.<random>``)."""
        return next(p for p in self.cluster.workers + self.cluster.apis
                    if member.startswith(cluster_mod.member_prefix(p)))

    def leader(self, task='timeout'):
        rows = self.query('SELECT holder, epoch FROM leaders '
                          'WHERE name = :n', n=task)
        return rows[0] if rows else None

    def logs(self, lines=30):
        return self.cluster.logs(lines)


    def _wait_started(self, procs, strict):
        """Wait until each process is up (its signal handlers are in place,
        so a SIGTERM meets them); ``strict``: one that exits is an error,
        otherwise it counts as done."""
        for proc in procs:
            backends.wait_for(lambda: _started(proc, strict), 60,
                              interval=0.1,
                              message='%s did not start' % proc.name)


def stop_left_running(made):
    """Stop each harness of ``made`` its test did not stop, printing its
    processes' logs first (what a failed test left running)."""
    for harness in made:
        if not harness.stopped:
            print(harness.logs(40))
            harness.stop()


def _started(proc, strict=True):
    if proc.poll() is not None:
        if strict:
            raise AssertionError('%s exited with %s:\n%s' % (
                proc.name, proc.returncode, log_tail(proc.log)))
        return True
    log = proc.log.read_text(errors='replace')
    return 'started with' in log or 'listening on' in log


class Supervisor(threading.Thread):
    """Restarts every API or worker process that exits (``Restart=always``)
    and keeps the list of exits as (name, code, monotonic time)."""

    def __init__(self, the_cluster, period=0.2):
        super().__init__(daemon=True, name='supervisor')
        self._cluster = the_cluster
        self._period = period
        self._seen = set()
        self._stopping = threading.Event()
        self.exits = []

    def run(self):
        while not self._stopping.wait(self._period):
            for proc in list(self._cluster.workers + self._cluster.apis):
                if proc.poll() is not None and proc.name not in self._seen:
                    self._seen.add(proc.name)
                    self.exits.append((proc.name, proc.returncode,
                                       time.monotonic()))
                    self._restart(proc)

    def _restart(self, proc):
        if proc in self._cluster.workers:
            # NOTE: on the same host (its command's prefix), with its own
            # options (a proxied or cut-off worker's backend URLs).
            self._cluster.add_worker(proc.own, prefix=proc.prefix)
            return
        port = int(proc.url.rsplit(':', 1)[1])
        name = 'api-%d' % len(self._cluster.apis)
        new = self._cluster._spawn('inspector-ha-api', name,
                                   {'DEFAULT': {'listen_port': port}})
        new.url = proc.url
        self._cluster.apis.append(new)

    def stop(self):
        self._stopping.set()
        self.join(10)


class Driver:
    """Starts introspections through HAProxy the way a client would:
    retried on connection errors and 5xx; a 409 after a failed try means
    an answer lost on the way was a 202 (the start was committed)."""

    def __init__(self, url, attempts=10, backoff=0.5):
        self._url = url
        self._attempts = attempts
        self._backoff = backoff
        self.accepted = set()
        self.retries = 0
        self.refused = {}

    def start_all(self, uuids, pace=0.05):
        for uuid in uuids:
            self._start(uuid)
            time.sleep(pace)

    def _start(self, uuid):
        failed = False
        for attempt in range(self._attempts):
            code = self._post(uuid)
            if code == 202 or (code == 409 and failed):
                self.accepted.add(uuid)
                return
            if code is not None and code < 500:
                break
            failed = True
            self.retries += 1
            time.sleep(self._backoff * (attempt + 1))
        self.refused[uuid] = code

    def _post(self, uuid):
        try:
            return requests.post('%s/v1/introspection/%s' % (
                self._url, uuid), timeout=30).status_code
        except requests.RequestException:
            return None

    def statuses(self):
        return {u: requests.get('%s/v1/introspection/%s' % (self._url, u),
                                timeout=30).json() for u in self.accepted}


class Background:
    """``func(*args)`` on a thread; ``result()`` joins and re-raises."""

    def __init__(self, func, *args):
        self._outcome = {}
        self._thread = threading.Thread(target=self._run,
                                        args=(func, args), daemon=True)
        self._thread.start()

    def _run(self, func, args):
        try:
            self._outcome['value'] = func(*args)
        except BaseException as exc:
            self._outcome['error'] = exc

    def result(self, timeout):
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError('background work still running')
        if 'error' in self._outcome:
            raise self._outcome['error']
        return self._outcome.get('value')
