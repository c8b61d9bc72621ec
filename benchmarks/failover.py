"""Recovery times after SIGKILL, measured as the functional tests observe
them: a worker's in-flight requests (``applied`` by it) until another
worker has them ``done`` (tests/functional/test_worker_kill.py), and the
``timeout`` task's leader until another member holds the ``leaders`` row
(tests/functional/test_leadership.py)."""

import signal
import threading
import time

import batches
import load
import testpath  # noqa: F401  (tests/functional on sys.path)
import backends
import batch
import cluster as cluster_mod


def _alive_workers(the_cluster):
    return [w for w in the_cluster.workers if w.poll() is None]


def _wait_started(worker):
    backends.wait_for(lambda: 'started with' in worker.log.read_text(
        errors='replace'), 60, message='%s did not start' % worker.name)


def _follow(database, held, killed, timeout):
    """Poll the held requests; when each was delivered again and done."""
    redelivered, done = {}, {}
    deadline = killed + timeout
    while len(done) < len(held) and time.monotonic() < deadline:
        now = time.monotonic() - killed
        for rid, row in batch.requests_by_id(database, held).items():
            if row.deliveries >= 2:
                redelivered.setdefault(rid, now)
            if row.status == 'done':
                done.setdefault(rid, (now, row.deliveries))
        time.sleep(0.05)
    return redelivered, done


def _worker_trial(the_cluster, ironic, victim, nodes_per_trial,
                  real_size):
    database = the_cluster.database
    nodes = batches.create_nodes(ironic, nodes_per_trial,
                                 real_size=real_size)
    starter = threading.Thread(target=load.start_all, args=(
        the_cluster.api_urls, list(nodes), nodes_per_trial), daemon=True)
    starter.start()
    held = set()
    backends.wait_for(lambda: held.update(batch.held_by(
        database, victim.name + '.', 'start')) or held, 90, interval=0.01,
        message='%s never held a start request' % victim.name)
    victim.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    redelivered, done = _follow(database, held, killed, 120)
    starter.join()
    again = {rid: at for rid, (at, n) in done.items() if n >= 2}
    return {'victim': victim.name, 'held': len(held),
            'finished_before_the_kill': len(done) - len(again),
            'redelivered': len(again),
            'not_done_after_120_s': len(held) - len(done),
            'first_redelivery_s': _round(min(redelivered.values(),
                                             default=None)),
            'all_redelivered_s': _round(max(redelivered.values(),
                                            default=None)),
            'all_done_s': _round(max(again.values(), default=None))}


def _round(value):
    return None if value is None else round(value, 2)


def worker_kill(ironic, workdir, trials, real_size, nodes_per_trial=40):
    results = []
    with batches.split_cluster(ironic, workdir, apis=1,
                               workers=3) as the_cluster:
        for trial in range(trials):
            alive = _alive_workers(the_cluster)
            victim = alive[trial % len(alive)]
            try:
                result = _worker_trial(the_cluster, ironic, victim,
                                       nodes_per_trial, real_size)
            except TimeoutError as exc:
                result = {'victim': victim.name, 'error': str(exc)}
            batches.log('worker kill trial %d: %s' % (trial + 1, result))
            results.append(result)
            _wait_started(the_cluster.add_worker())
    return results


def _leader_trial(the_cluster):
    database = the_cluster.database
    before = batch.leaders(database)['timeout']
    leader = cluster_mod.process_of(the_cluster, before.holder)
    leader.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    backends.wait_for(lambda: batch.leaders(database)[
        'timeout'].holder != before.holder, 60, interval=0.02)
    failover = time.monotonic() - killed
    after = batch.leaders(database)['timeout']
    return {'killed': leader.name, 'new_leader': after.holder,
            'epoch': [before.epoch, after.epoch],
            'new_leader_s': round(failover, 2)}


def leader_kill(ironic, workdir, trials):
    results = []
    with batches.split_cluster(ironic, workdir, apis=0, workers=3,
                               conf=cluster_mod.FAST_PERIODIC) as the_cluster:
        backends.wait_for(lambda: 'timeout' in batch.leaders(
            the_cluster.database), 60, message='no leader of timeout')
        for worker in the_cluster.workers:
            _wait_started(worker)
        for trial in range(trials):
            try:
                result = _leader_trial(the_cluster)
            except TimeoutError as exc:
                result = {'error': str(exc)}
            batches.log('leader kill trial %d: %s' % (trial + 1, result))
            results.append(result)
            _wait_started(the_cluster.add_worker())
            time.sleep(1.0)  # let the newcomer join the group
    return results


def summary(worker_trials, leader_trials):
    done = [t['all_done_s'] for t in worker_trials
            if t.get('all_done_s') is not None]
    first = [t['first_redelivery_s'] for t in worker_trials
             if t.get('first_redelivery_s') is not None]
    leaders = [t['new_leader_s'] for t in leader_trials
               if 'new_leader_s' in t]
    return {'worker_kill_to_redelivered_done_s': {
                'max': max(done, default=None),
                'min': min(done, default=None), 'trials': len(done)},
            'worker_kill_to_first_redelivery_s': {
                'max': max(first, default=None),
                'min': min(first, default=None)},
            'leader_kill_to_new_leader_s': {
                'max': max(leaders, default=None),
                'min': min(leaders, default=None),
                'trials': len(leaders)},
            'worker_trials': worker_trials, 'leader_trials': leader_trials}
