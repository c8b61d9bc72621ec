"""The load: timed start requests, timed simulated ramdisks, and waiting
for the batch through the API's own list call."""

import datetime
import math
import threading
import time
from concurrent import futures

import requests
import sqlalchemy as sa

import measure
import testpath  # noqa: F401  (tests/functional on sys.path)
import ramdisk

PAGE = 1000
#: What a ramdisk's post returns for a failure ironic-python-agent 13 does
#: not retry, such as no answer in time: not one of ``ramdisk.RETRIED``.
NOT_RETRIED = 'read timeout'
#: The powered-on nodes, read from Ironic's database.
POWERED_ON = sa.text("SELECT uuid FROM nodes WHERE power_state = 'power on'")
UNFINISHED = ('starting', 'waiting', 'processing', 'reapplying',
              'enrolling', 'aborting')


class TimedRamdisks(ramdisk.Ramdisks):
    """:class:`ramdisk.Ramdisks` that times every POST /v1/continue and
    counts its outcomes.

    A real ramdisk boots when its node powers on, and noticing that costs
    Ironic nothing. So these read the powered-on nodes from Ironic's own
    database (one query every ``poll_interval``: next to nothing for
    Ironic), not from its API (``benchmarks/results/README.md``,
    2026-11-27, says what the API listings cost). A failed read is
    retried at the next interval.
    """

    def __init__(self, database_url, api_urls, nodes, concurrency,
                 poll_interval=1.0, **retry):
        """``database_url``: Ironic's database (SQLAlchemy URL);
        ``retry``: how a ramdisk retries (``ramdisk.IPA13``)."""
        super().__init__(None, api_urls, nodes, concurrency=concurrency,
                         **retry)
        self._engine = sa.create_engine(database_url,
                                        poolclass=sa.pool.NullPool)
        #: Which nodes' ramdisks have booted (their UUIDs).
        self.booted = POWERED_ON
        self._interval = poll_interval
        self.outcomes = measure.Outcomes()

    def _watch(self):
        while self._pending and not self._stop.wait(self._interval):
            try:
                with self._engine.connect() as conn:
                    powered_on = conn.execute(self.booted).scalars().all()
            except sa.exc.SQLAlchemyError:
                continue
            for uuid in powered_on:
                payload = self._pending.pop(uuid, None)
                if payload is not None:
                    self._pool.submit(self._post, uuid, payload)

    def _post_once(self, payload):
        # NOTE: ironic-python-agent 13's call_inspector retries a refused
        # or broken connection (and a 409 or 5xx answer), not an answer
        # that did not come within its http_request_timeout: the agent
        # exits, and under its usual systemd unit starts again 30 s
        # later and posts again only if its node is still powered on
        # (ironic-inspector 12.5 answers once it has processed the data,
        # and powers the node off then).
        return self.outcomes.post(next(self._apis) + '/v1/continue',
                                  not_retried=NOT_RETRIED, json=payload,
                                  timeout=ramdisk.IPA_TIMEOUT)

    @property
    def unposted(self):
        """Nodes whose ramdisk never saw them powered on."""
        return len(self._pending)


def start_all(api_urls, uuids, concurrency):
    """POST a start for every node, ``concurrency`` at a time, round
    robin over the APIs. Returns (outcomes, accepted UUIDs)."""
    outcomes = measure.Outcomes()

    def one(item):
        index, uuid = item
        url = '%s/v1/introspection/%s' % (api_urls[index % len(api_urls)],
                                          uuid)
        return uuid, outcomes.post(url, timeout=120)

    with futures.ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, enumerate(uuids)))
    return outcomes, [uuid for uuid, code in results if code == 202]


def statuses(api_url, wanted, states=None):
    """``{uuid: status}`` of the ``wanted`` nodes, from the list call,
    optionally only those in one of ``states``."""
    found, marker = {}, None
    while True:
        params = {'limit': PAGE}
        if states:
            params['state'] = ','.join(states)
        if marker:
            params['marker'] = marker
        page = requests.get(api_url + '/v1/introspection', params=params,
                            timeout=60).json()['introspection']
        found.update((s['uuid'], s) for s in page if s['uuid'] in wanted)
        if len(page) < PAGE:
            return found
        marker = page[-1]['uuid']


def _utc_seconds(iso):
    value = datetime.datetime.fromisoformat(iso)
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value.timestamp()


def _any_in(api_url, states):
    """Whether any node is in one of ``states`` (asks for one row)."""
    page = requests.get(api_url + '/v1/introspection', params={
        'limit': 1, 'state': ','.join(states)}, timeout=60).json()
    return bool(page['introspection'])


def wait_all(api_url, uuids, timeout, states=UNFINISHED, interval=1.0,
             exact=False):
    """Poll until no node is in one of ``states`` (by default: until all
    finished or errored), or ``timeout`` seconds; then read the status
    of each of ``uuids``.

    Each poll asks for one row of any node, to keep the polling
    negligible for the API being measured (``exact``: lists the nodes in
    ``states`` and looks for ``uuids`` among them). The batch's end is
    taken from the nodes' ``finished_at``, not from when a poll noticed.

    Returns ``states`` (the status of each node) and ``finished_at``
    (sorted epoch seconds of the nodes' ``finished_at``).
    """
    began, wanted = time.monotonic(), set(uuids)
    while time.monotonic() - began < timeout:
        try:
            if not (statuses(api_url, wanted, states) if exact
                    else _any_in(api_url, states)):
                break
        except (requests.RequestException, ValueError, KeyError):
            pass
        time.sleep(interval)
    final = statuses(api_url, wanted)
    return {'states': final, 'finished_at': sorted(
        _utc_seconds(s['finished_at']) for s in final.values()
        if s.get('finished_at'))}


def progress(finished_at, began, steps=10):
    """Seconds after ``began`` at which each tenth of the finished nodes
    had finished: ``[[fraction, seconds], ...]``."""
    count = len(finished_at)
    return [[round(i / steps, 2), round(finished_at[
        max(0, math.ceil(count * i / steps) - 1)] - began, 1)]
        for i in range(1, steps + 1)] if count else []


def outcome_of(states, uuids):
    """Counts of finished, error and stuck nodes, and sample errors."""
    finished = [u for u in uuids if states.get(u, {}).get('finished')]
    errors = {u: states[u]['error'] for u in finished
              if states[u].get('error')}
    stuck = {}
    for uuid in uuids:
        if uuid not in finished:
            state = states.get(uuid, {}).get('state', 'unknown')
            stuck[state] = stuck.get(state, 0) + 1
    return {'finished_ok': len(finished) - len(errors),
            'error': len(errors), 'stuck': sum(stuck.values()),
            'stuck_by_state': stuck,
            'error_samples': sorted(set(errors.values()))[:5]}


def continue_burst(api_urls, nodes, concurrency, timeout):
    """Start ``nodes`` (``{uuid: payload}``), wait until all are
    ``waiting``, then post all their ramdisk data at the same instant."""
    uuids = list(nodes)
    start, accepted = start_all(api_urls, uuids, concurrency)
    waited = wait_all(api_urls[0], accepted, timeout,
                      states=('starting',), interval=0.5, exact=True)
    ready = [u for u in accepted
             if waited['states'].get(u, {}).get('state') == 'waiting']
    outcomes = measure.Outcomes()
    barrier = threading.Barrier(len(ready)) if ready else None

    def post(index, uuid):
        barrier.wait()
        outcomes.post(api_urls[index % len(api_urls)] + '/v1/continue',
                      json=nodes[uuid], timeout=60)

    threads = [threading.Thread(target=post, args=(i, u))
               for i, u in enumerate(ready)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done = wait_all(api_urls[0], accepted, timeout, exact=True)
    return {'nodes': len(uuids), 'posted_at_once': len(ready),
            'start': start.report(), 'continue': outcomes.report(),
            'outcome': outcome_of(done['states'], uuids)}

