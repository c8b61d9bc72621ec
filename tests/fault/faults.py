"""The faults, each injected mid-batch on a thread of its own.

Each ``inject(harness)`` waits until the batch is under way, injects, and
returns a :class:`Fault` with the processes it SIGKILLed and the recovery
time it measured (``recovery_s``, what it means is in ``measures``).
"""

import dataclasses
import datetime
import json
import pathlib
import random
import signal
import subprocess
import time

from inspector_ha.common import timeutils
from inspector_ha.ironic import pacing

import backends
import cluster as cluster_mod

#: Inject once this many nodes have reached ``waiting``: mid-batch.
MID_BATCH = 5


@dataclasses.dataclass
class Fault:
    name: str
    measures: str = ''
    recovery_s: float = None
    killed: list = dataclasses.field(default_factory=list)
    notes: dict = dataclasses.field(default_factory=dict)

    def line(self):
        return json.dumps({'fault': self.name, 'measures': self.measures,
                           'recovery_s': self.recovery_s, **self.notes},
                          default=str)


def _held_by(harness, member):
    """Open requests ``member`` (an id's prefix) holds: it counted their
    last delivery, or holds them waiting for a slot."""
    return {r.id for r in harness.query(
        "SELECT id FROM requests WHERE status IN ('pending', 'applied') "
        "AND held_by LIKE :m", m=member + '%')}


def _member(proc):
    return cluster_mod.member_prefix(proc)


def _in(proc, members):
    """Whether ``proc`` is one of ``members`` (member ids)."""
    return any(m.startswith(_member(proc)) for m in members)


def _busy_worker(harness, timeout=20):
    """A worker caught holding requests (or any, after ``timeout``)."""
    found = {}

    def holding():
        for proc in harness.alive_workers():
            held = _held_by(harness, _member(proc))
            if held:
                found.update(proc=proc, held=held)
                return True
        return False
    try:
        backends.wait_for(holding, timeout, interval=0.01)
    except TimeoutError:
        alive = backends.wait_for(harness.alive_workers, 60,
                                  message='no worker alive')
        found.update(proc=random.choice(alive), held=set())
    return found['proc'], found['held']


def _taken_over(harness, held, timeout=120):
    """Seconds until every request in ``held`` moved on while its holder
    is dead or frozen: a newer transition for it, or closed."""
    started = time.monotonic()
    mark = harness.progress_mark()
    if held:
        backends.wait_for(lambda: _all_moved(harness, held, mark), timeout,
                          interval=0.05, message='held requests not taken '
                          'over after %s s' % timeout)
    return round(time.monotonic() - started, 2)


def _all_moved(harness, held, mark):
    rows = harness.query(
        "SELECT r.id, (SELECT count(*) FROM transitions t WHERE "
        "t.request_id = r.id AND t.id > :mark) AS newer FROM requests r "
        "WHERE r.status IN ('pending', 'applied')", mark=mark)
    return not (held & {r.id for r in rows if r.newer == 0})


def kill_worker(harness, mid_batch=MID_BATCH):
    harness.wait_progress(mid_batch)
    victim, _ = _busy_worker(harness)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    held = _held_by(harness, _member(victim))
    return Fault('worker SIGKILL', 'SIGKILL to its requests moved on by '
                 'another worker', _taken_over(harness, held),
                 [victim], {'held': len(held)})


def pause_worker(harness, after=2.0, seconds=0.0, mid_batch=MID_BATCH):
    """SIGSTOP a busy worker (a hung kernel, a VM paused by its
    hypervisor: its connections stay open) until its requests were taken
    over, ``after`` more seconds and ``seconds`` in all at least, then
    SIGCONT: it wakes up mid-batch with stale work."""
    harness.wait_progress(mid_batch)
    victim, _ = _busy_worker(harness)
    victim.send_signal(signal.SIGSTOP)
    started = time.monotonic()
    held = _held_by(harness, _member(victim))
    try:
        took = _taken_over(harness, held, timeout=max(60, seconds))
        _pass(max(after, started + seconds - time.monotonic()))
    finally:
        seen = victim.log.stat().st_size
        victim.send_signal(signal.SIGCONT)
    woken = time.monotonic()
    if held:
        _first_stale_write(victim, seen)
    return Fault('worker SIGSTOP then SIGCONT', 'SIGSTOP to its requests '
                 'moved on by another worker', took, [],
                 {'held': len(held), 'member': _member(victim),
                  'paused_s': round(woken - started, 2),
                  'rejoined_s': _rejoined_after(harness, victim, woken),
                  'exit': victim.poll()})


def _rejoined_after(harness, victim, woken, timeout=60):
    """Seconds from ``woken`` until ``victim`` is in the member group
    again or, if it gave its backend up on waking and exited (an etcd
    lease that lapsed is gone for good), the worker the supervisor
    started in its place; None if neither is."""
    before = set(harness.cluster.workers)

    def back():
        members = harness.cluster.status()['members']
        if victim.poll() is None:
            return _in(victim, members)
        return any(_in(p, members) for p in harness.alive_workers()
                   if p not in before)
    try:
        backends.wait_for(back, timeout, interval=0.5)
    except TimeoutError:
        return None
    return round(time.monotonic() - woken, 2)


def freeze_after_claim(harness, seconds=15.0):
    """The failpoint worker stops itself right after committing its first
    power-on claim, before the call (:mod:`harness`); once its requests
    were taken over and ``seconds`` passed (past the claim's window),
    SIGCONT: it must not send that power-on."""
    victim, mark = harness.failpoint, harness.freeze_mark
    backends.wait_for(lambda: _stopped(victim) and mark.exists(), 120,
                      interval=0.05, message='the worker never froze after '
                      'a claim')
    started = time.monotonic()
    held = _held_by(harness, _member(victim))
    try:
        took = _taken_over(harness, held, timeout=60)
        _pass(started + seconds - time.monotonic())
    finally:
        seen = victim.log.stat().st_size
        victim.send_signal(signal.SIGCONT)
    node = mark.read_text()
    # NOTE: wait for the claim's own thread, not for the first stale
    # write of another one: the batch could end, and the worker be
    # stopped, before that thread had checked its claim (CI, 2026-12-07).
    # The check comes just before the call is sent, after the call's wait
    # for room among the worker's Ironic calls (up to LONGEST_WAIT: the
    # freeze made its calls in flight look slow, which lowers the limit).
    _logged(victim, seen, 'Not doing power-on of node %s' % node,
            timeout=pacing.LONGEST_WAIT + 15)
    return Fault('worker frozen after its power-on claim', 'SIGSTOP (by '
                 'itself) to its requests moved on by another worker', took,
                 [], {'held': len(held), 'member': _member(victim),
                      'node': mark.read_text(), 'log_from': seen})


def _stopped(proc):
    """Whether ``proc`` is stopped by a signal (state T)."""
    stat = pathlib.Path('/proc/%d/stat' % proc.pid).read_text()
    return stat.rsplit(')', 1)[1].split()[0] == 'T'


def _first_stale_write(victim, seen):
    """Give the woken worker time to try the writes of the work it held
    (a task it was in finishes first; a database call it was in is
    retried) before the batch may end and stop it; the test then checks
    that they were refused."""
    _logged(victim, seen, '"outcome": "stale"')


def _logged(victim, seen, text, timeout=20):
    """Wait until ``victim`` logs ``text`` after offset ``seen`` (or
    ``timeout`` passes: the test's assertion reports it)."""
    def found():
        with open(victim.log, 'rb') as log:
            log.seek(seen)
            return text.encode() in log.read()
    try:
        backends.wait_for(found, timeout, interval=0.1)
    except TimeoutError:
        pass


def term_worker(harness, mid_batch=MID_BATCH):
    """SIGTERM a busy worker (the supervisor starts it again): what it
    holds finishes or goes back to the queue."""
    harness.wait_progress(mid_batch)
    victim, _ = _busy_worker(harness)
    held = _held_by(harness, _member(victim))
    victim.send_signal(signal.SIGTERM)
    return Fault('worker SIGTERM', 'SIGTERM to its requests moved on',
                 _taken_over(harness, held), [], {'held': len(held)})


def term_api(harness, mid_batch=MID_BATCH):
    return _signal_api(harness, signal.SIGTERM, 'API SIGTERM', mid_batch)


def pause_api(harness, seconds=8.0, mid_batch=MID_BATCH):
    """SIGSTOP an API process for ``seconds``, then SIGCONT."""
    harness.wait_progress(mid_batch)
    victim = next(a for a in harness.cluster.apis if a.poll() is None)
    victim.send_signal(signal.SIGSTOP)
    try:
        _pass(seconds)
    finally:
        victim.send_signal(signal.SIGCONT)
    return Fault('API SIGSTOP then SIGCONT', 'paused for', seconds, [])


def pause_leader(harness, task='timeout', mid_batch=MID_BATCH):
    """SIGSTOP the leader of ``task`` past its lease, then SIGCONT once
    another member leads: its next write is fenced."""
    harness.wait_progress(mid_batch)
    before = harness.leader(task)
    victim = harness.process_of(before.holder)
    victim.send_signal(signal.SIGSTOP)
    started = time.monotonic()
    try:
        backends.wait_for(lambda: harness.leader(task).epoch > before.epoch,
                          60, interval=0.05, message='no new leader')
        took = round(time.monotonic() - started, 2)
        _pass(2.0)
    finally:
        victim.send_signal(signal.SIGCONT)
    return Fault('periodic leader SIGSTOP', 'SIGSTOP to a new leader '
                 'elected (epoch bumped)', took, [], {'task': task})


def kill_api(harness, mid_batch=MID_BATCH):
    return _signal_api(harness, signal.SIGKILL, 'API SIGKILL', mid_batch)


def _signal_api(harness, signum, name, mid_batch):
    harness.wait_progress(mid_batch)
    victim = next(a for a in harness.cluster.apis if a.poll() is None)
    victim.send_signal(signum)
    started = time.monotonic()
    backends.wait_for(lambda: any(
        a.poll() is None and a is not victim and a.url == victim.url
        for a in harness.cluster.apis), 30, interval=0.05)
    backends.wait_for(lambda: cluster_mod._answers(victim.url), 60,
                      interval=0.05)
    killed = [victim] if signum == signal.SIGKILL else []
    return Fault(name, 'signal to the restarted API answering (HAProxy '
                 'serves from the other meanwhile)',
                 round(time.monotonic() - started, 2), killed)


def kill_leader(harness, task='timeout', mid_batch=MID_BATCH):
    harness.wait_progress(mid_batch)
    before = harness.leader(task)
    victim = harness.process_of(before.holder)
    victim.send_signal(signal.SIGKILL)
    started = time.monotonic()
    backends.wait_for(lambda: harness.leader(task).epoch > before.epoch,
                      60, interval=0.05, message='no new leader')
    return Fault('periodic leader SIGKILL', 'SIGKILL to a new leader '
                 'elected (epoch bumped)',
                 round(time.monotonic() - started, 2), [victim],
                 {'task': task})


def _restart(harness, server, name, mid_batch):
    harness.wait_progress(mid_batch)
    started = time.monotonic()
    server.restart()
    back = time.monotonic()
    commits = harness.progress_any()
    backends.wait_for(lambda: harness.progress_any() > commits or
                      harness.batch_over(), 120, interval=0.05,
                      message='no commit after the restart')
    return Fault('%s restart' % name, 'restart (stop, start) to the next '
                 'committed transition', round(time.monotonic() - started, 2),
                 [], {'down_s': round(back - started, 2)})


def restart_rabbitmq(harness, mid_batch=MID_BATCH):
    return _restart(harness, harness.servers.rabbit, 'RabbitMQ', mid_batch)


def restart_redis(harness, mid_batch=MID_BATCH):
    return _restart(harness, harness.servers.redis, 'Redis', mid_batch)


def restart_database(harness, mid_batch=MID_BATCH):
    server = harness.servers.database
    return _restart(harness, server, server.name, mid_batch)


def _holding(harness, victim, mid_batch):
    """Wait until the batch is under way and ``victim`` holds requests
    (for 20 s at most: then it is faulted holding none)."""
    harness.wait_progress(mid_batch)
    try:
        backends.wait_for(lambda: _held_by(harness, _member(victim)), 20,
                          interval=0.01)
    except TimeoutError:
        pass


def partition_worker(harness, length=40, mid_batch=MID_BATCH):
    """Blackhole the proxied worker's connections to Redis until it exits
    on its own (at most ``length`` seconds), then heal."""
    proxy, victim = harness.proxy, harness.proxied
    _holding(harness, victim, mid_batch)
    proxy.blackhole()
    held = _held_by(harness, _member(victim))
    started = time.monotonic()
    try:
        victim.wait(length)
        detected = round(time.monotonic() - started, 2)
    except subprocess.TimeoutExpired:
        detected = None
    finally:
        proxy.heal()
    return Fault('worker partitioned from Redis', 'blackhole to the cut-off '
                 'worker exiting on its own', detected, [],
                 {'held': len(held), 'exit': victim.poll(),
                  'partition_s': length})


def cut_worker(harness, seconds=30.0, mid_batch=MID_BATCH):
    """Take the link of the cut-off worker's host down once it holds
    requests (its process keeps running, unreachable; its connections
    stay open), for ``seconds``, then up again: its requests move on
    once its lease lapses, and it joins the group again (itself, or as
    restarted by the supervisor if it gave its backends up)."""
    victim = harness.cut_off
    _holding(harness, victim, mid_batch)
    harness.cutoff.cut()
    started = time.monotonic()
    held = _held_by(harness, _member(victim))
    try:
        took = _taken_over(harness, held, timeout=max(60, seconds))
        _pass(started + seconds - time.monotonic())
    finally:
        harness.cutoff.heal()
    healed = time.monotonic()
    backends.wait_for(lambda: _host_in_group(harness, victim.prefix), 120,
                      interval=0.5, message='no worker of the cut-off host '
                      'joined the group again')
    return Fault('worker cut off', 'link down to its requests moved on by '
                 'another worker', took, [],
                 {'held': len(held), 'member': _member(victim),
                  'cut_s': round(healed - started, 2),
                  'rejoined_s': round(time.monotonic() - healed, 2),
                  'exit': victim.poll()})


def _host_in_group(harness, prefix):
    """Whether a live worker on the host of ``prefix`` (the victim, or
    its restart if it gave its backends up) is in the member group."""
    members = harness.cluster.status()['members']
    return any(_in(p, members) for p in harness.alive_workers()
               if p.prefix == prefix)


def poison(harness):
    """A ledger row whose payload is not JSON, for an error event on a node
    waiting for a ramdisk that never comes; the re-drive publishes it."""
    uuid = harness.silent
    backends.wait_for(lambda: harness.states([uuid]).get(uuid) == 'waiting',
                      120, interval=0.1)
    request_id = 'deadbeef-0000-4000-8000-%012d' % random.randrange(10**12)
    old = timeutils.utcnow() - datetime.timedelta(hours=1)
    harness.execute(
        "INSERT INTO requests (id, node_uuid, event, attempt, status, "
        "payload, deliveries, created_at, updated_at) VALUES (:id, :n, "
        "'error', 1, 'pending', '{\"error\": ', 0, :t, :t)",
        id=request_id, n=uuid, t=old)
    started = time.monotonic()
    backends.wait_for(lambda: harness.query(
        'SELECT status FROM requests WHERE id = :i', i=request_id)[0].status
        == 'dead', 120, interval=0.1, message='poison not dead-lettered')
    return Fault('poison request', 'injection to dead-lettered',
                 round(time.monotonic() - started, 2), [],
                 {'request': request_id, 'node': uuid})


def _pass(seconds):
    """Let ``seconds`` go by (a deadline poll: nothing to wait for)."""
    deadline = time.monotonic() + seconds
    backends.wait_for(lambda: time.monotonic() >= deadline,
                      max(seconds, 0) + 1, interval=0.1)
