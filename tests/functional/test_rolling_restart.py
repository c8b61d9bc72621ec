"""The operator's rolling restart: 2 APIs behind the shipped HAProxy
file and 3 workers on PostgreSQL, RabbitMQ and Redis with a real Ironic.
While introspections are started one after another and their statuses
read without pause, each API and then each worker gets SIGTERM, exits 0
and is started again: no client request fails and every node finishes.
"""

import signal
import threading

import pytest
import requests

import backends
import batch
import cluster as cluster_mod
import haproxy as haproxy_mod
import ramdisk

NODES = 40
DRAIN = 8.0  # longer than HAProxy's fall x inter: 3 x 2 s


class Clients:
    """Starts the nodes one by one (until told to hurry) and reads their
    statuses in a loop; every request that fails is recorded."""

    def __init__(self, url, uuids):
        self.url = url
        self.failures = []
        self.requests = 0
        self._uuids = list(uuids)
        self._started = []
        self.hurry = threading.Event()
        self._done = threading.Event()
        self._threads = [threading.Thread(target=self._start, daemon=True),
                         threading.Thread(target=self._read, daemon=True)]

    def run(self):
        for thread in self._threads:
            thread.start()
        return self

    def _call(self, method, path, expect):
        self.requests += 1
        try:
            resp = requests.request(method, self.url + path, timeout=60)
            if resp.status_code != expect:
                self.failures.append((method, path, resp.status_code,
                                      resp.text[:200]))
        except requests.RequestException as exc:
            self.failures.append((method, path, None, repr(exc)))

    def _start(self):
        for uuid in self._uuids:
            self._call('POST', '/v1/introspection/%s' % uuid, 202)
            self._started.append(uuid)
            self.hurry.wait(2.0)  # NOTE: pacing, not an assertion

    def _read(self):
        while not self._done.is_set():
            for uuid in list(self._started):
                self._call('GET', '/v1/introspection/%s' % uuid, 200)
            self._done.wait(0.1)

    def stop(self):
        self.hurry.set()
        self._threads[0].join(300)
        self._done.set()
        self._threads[1].join(60)


@pytest.fixture
def deployment(tmp_path, ironic, pg_url, rabbit_url, redis_url):
    the = cluster_mod.Cluster(tmp_path, pg_url, rabbit_url, redis_url,
                              ironic.url, apis=2, workers=3,
                              conf={'api': {'drain_time': DRAIN}})
    proxy = None
    try:  # NOTE: a failed start must not leave processes behind
        the.start()
        proxy = haproxy_mod.HAProxy(the.api_urls).start()
        backends.wait_for(proxy.all_up, 30, interval=0.2)
        yield the, proxy
    finally:
        if proxy is not None:
            proxy.stop()
        the.stop(timeout=90)


def _sigterm_and_restart(the, proc, proxy):
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(120)
    assert code == 0, '%s exited %s\n%s' % (proc.name, code, the.logs())
    new = the.restart(proc)
    if hasattr(new, 'url'):
        backends.wait_for(lambda: cluster_mod._answers(new.url), 60,
                          message=the.logs())
    else:
        backends.wait_for(lambda: 'started with' in new.log.read_text()
                          .split('Signal 15 received')[-1], 60,
                          message=the.logs())
    # The next victim only once HAProxy sends to both APIs again.
    backends.wait_for(proxy.all_up, 60, interval=0.2,
                      message=str(proxy.server_states()))


def test_sigterm_to_each_api_and_worker_in_turn_fails_no_request_and_loses_no_introspection(  # noqa: E501
        deployment, ironic):
    the, proxy = deployment
    nodes = batch.create_nodes(ironic, NODES)
    disks = ramdisk.Ramdisks(ironic.url, [proxy.url], nodes).start()
    clients = Clients(proxy.url, nodes).run()
    try:
        for proc in list(the.apis) + list(the.workers):
            _sigterm_and_restart(the, proc, proxy)
        clients.stop()
        states = batch.wait_finished(proxy.url, list(nodes), 300,
                                     the.database)
    finally:
        clients.stop()
        disks.stop()
    assert clients.failures == [], clients.failures[:10]
    # The APIs drained: HAProxy never met a closed port (no retry).
    assert proxy.retries() == 0
    assert clients.requests > NODES
    assert {s['state'] for s in states.values()} == {'finished'}, states
    assert {s['error'] for s in states.values()} == {None}
    assert set(disks.results.values()) <= {200, 202}, disks.results
    batch.assert_each_strict_transition_applied_once(the.database,
                                                     list(nodes))
