"""Whole-controller faults, each injected mid-batch on a thread of its own
(as ``tests/fault/faults.py``'s): every process of one controller's
namespace at once, its backend members, its API and its worker."""

import time

import requests

import backends
import faults

#: Inject once this many nodes have reached ``waiting``: mid-batch.
MID_BATCH = 20


def power_loss(harness, index=1, mid_batch=MID_BATCH):
    """Every process of controller ``index`` SIGKILLed at once; it stays
    down. Measures how long until each request its worker held moved on,
    and the longest time the API behind HAProxy did not answer."""
    controller, procs, held = _under_way(harness, index, mid_batch)
    harness.down.add(controller.index)
    started = time.monotonic()
    controller.power_loss()
    unanswered = _longest_unanswered(harness, seconds=10)
    took = faults._taken_over(harness, held, timeout=120)
    return faults.Fault(
        'controller %d power loss' % index, 'SIGKILL of every process of '
        'a controller to its requests moved on', took, procs,
        dict(_roles(harness), held=len(held), api_unanswered_s=unanswered,
             after_s=round(time.monotonic() - started, 2)))


def freeze(harness, index=1, seconds=120.0, mid_batch=MID_BATCH):
    """Every process of controller ``index`` SIGSTOPed for ``seconds``,
    then SIGCONT; its members rejoin their clusters."""
    return _outage(harness, index, seconds, mid_batch, 'freeze', 'thaw',
                   'controller %d frozen %d s' % (index, seconds),
                   'SIGSTOP of every process of a controller to its '
                   'requests moved on')


def _under_way(harness, index, mid_batch):
    """Controller ``index``, its live processes and the requests its
    worker holds, once the batch is under way."""
    harness.wait_progress(mid_batch)
    controller = harness.site.controllers[index - 1]
    procs = [p for p in harness.cluster.on(controller) if p.poll() is None]
    held = set()
    for worker in (p for p in procs if p in harness.cluster.workers):
        held |= faults._held_by(harness, faults._member(worker))
    return controller, procs, held


def _roles(harness):
    """Which members lead the service's elected jobs, before the fault."""
    return {'leaders': {row.name: row.holder.split('.')[0] for row in
                        harness.query('SELECT name, holder FROM leaders')}}


def _longest_unanswered(harness, seconds):
    """Over ``seconds``, the longest time (s) in which no status read
    through HAProxy was answered 200."""
    url = '%s/v1/introspection/%s' % (harness.url, next(iter(harness.nodes)))
    longest, since = 0.0, None
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            ok = requests.get(url, timeout=5).status_code == 200
        except requests.RequestException:
            ok = False
        now = time.monotonic()
        if ok:
            since = None
        else:
            since = since or now
            longest = max(longest, now - since)
        time.sleep(0.1)
    return round(longest, 2)


def wait_rejoined(harness, controller, timeout=120):
    """Until every member of ``controller`` serves its cluster again."""
    site = harness.site
    i = controller.index - 1
    backends.wait_for(lambda: site.rabbit[i].cluster_size() == 3, timeout,
                      interval=1, message='RabbitMQ node did not rejoin')
    backends.wait_for(site.galera[i].synced, timeout, interval=1,
                      message='Galera node did not rejoin')


def network_cut(harness, index=3, seconds=30.0, mid_batch=MID_BATCH):
    """Controller ``index``'s link down for ``seconds`` (its processes
    keep running, unreachable, their connections open), then up; its
    members rejoin their clusters."""
    return _outage(harness, index, seconds, mid_batch, 'cut', 'heal',
                   'controller %d cut off %d s' % (index, seconds),
                   'its link down to its requests moved on')


def _outage(harness, index, seconds, mid_batch, begin, end, name,
            measures):
    """Controller ``index``'s ``begin()`` once the batch is under way,
    its ``end()`` after ``seconds``; how long until the requests its
    worker held moved on, and the longest time the API did not answer."""
    controller, _, held = _under_way(harness, index, mid_batch)
    roles = _roles(harness)
    getattr(controller, begin)()
    started = time.monotonic()
    try:
        unanswered = _longest_unanswered(harness, seconds=10)
        took = faults._taken_over(harness, held, timeout=max(60, seconds))
        faults._pass(started + seconds - time.monotonic())
    finally:
        getattr(controller, end)()
    return faults.Fault(name, measures, took, [],
                        dict(roles, held=len(held),
                             api_unanswered_s=unanswered))
