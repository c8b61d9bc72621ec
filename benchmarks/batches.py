"""The deployments measured (ironic-inspector 12.5 as the baseline, a
split cluster, the embedded default) and one measured batch on any."""

import contextlib
import pathlib
import signal
import subprocess
import sys
import time

from inspector_ha.conf import worker as worker_conf

import ironic_log
import ledger
import load
import measure
import sampling
import testpath  # noqa: F401  (tests/functional on sys.path)
import backends
import batch
import cluster as cluster_mod
import embedded as embedded_mod
import ramdisk
import upstream

#: The split cluster runs the project's defaults for re-driving and for
#: the worker pool (the functional tests' cluster shortens the first to
#: 5 s / 20 s and sets 4 threads; until 2026-11-27 the benchmark kept
#: those 4 threads while saying it ran the default).
CLUSTER_CONF = {'worker': {
    'redrive_period': 15, 'redrive_after': 60,
    'pool_size': next(opt.default for opt in worker_conf.OPTS
                      if opt.name == 'pool_size')}}


def log(message):
    print('[%s] %s' % (time.strftime('%H:%M:%S'), message),
          file=sys.stderr, flush=True)


def add_post_size_option(parser):
    """``--small-posts`` (:func:`real_size` reads it)."""
    parser.add_argument('--small-posts', action='store_true',
                        help="the simulated ramdisks post 1.4 KB (the "
                             "results before 2026-11-28 19:30 UTC) instead "
                             "of a real agent's 20 KB (17.5 KB of logs, 1.2 "
                             'KB of CPU flags)')


def real_size(args):
    return not args.small_posts


def create_nodes(ironic, count, *, real_size):
    """``{uuid: ramdisk payload}`` of ``count`` new Ironic nodes, each
    payload as large as a real agent's (about 20 KB) if ``real_size``,
    else 1.4 KB."""
    began = time.monotonic()
    nodes = batch.create_nodes(ironic, count, real_size=real_size)
    log('created %d nodes in Ironic in %.0f s (not measured)' % (
        count, time.monotonic() - began))
    return nodes


def batch_and_burst_nodes(ironic, args):
    """The batch's nodes and the burst's (``args.concurrency`` more)."""
    size = real_size(args)
    return (create_nodes(ironic, args.nodes, real_size=size),
            create_nodes(ironic, args.concurrency, real_size=size))


@contextlib.contextmanager
def fresh_backends():
    """``(database, transport, coordination)``: a fresh PostgreSQL
    database, RabbitMQ vhost and Redis namespace, removed afterwards."""
    with contextlib.ExitStack() as stack:
        database = backends.postgres_url()
        stack.callback(backends.drop_database, database)
        transport = backends.rabbit_url()
        stack.callback(backends.delete_vhost, transport)
        coordination = backends.redis_url()
        stack.callback(backends.flush_redis_namespace, coordination)
        yield database, transport, coordination


@contextlib.contextmanager
def split_cluster(ironic, workdir, apis=2, workers=3, conf=None):
    """A Cluster on a fresh PostgreSQL database, RabbitMQ vhost and Redis
    namespace, all removed afterwards."""
    with contextlib.ExitStack() as stack:
        database, transport, coordination = stack.enter_context(
            fresh_backends())
        the_cluster = cluster_mod.Cluster(
            workdir, database, transport, coordination, ironic.url,
            apis=apis, workers=workers, conf=conf or CLUSTER_CONF)
        stack.callback(the_cluster.stop)
        try:
            the_cluster.start()
        except Exception:
            log('the cluster did not start:\n' + the_cluster.logs())
            raise
        yield the_cluster


@contextlib.contextmanager
def embedded(ironic, workdir):
    """The all-in-one ``inspector-ha`` with no configuration file."""
    proc, url = embedded_mod.start(workdir, ironic.url)
    try:
        yield proc, url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def upstream_inspector(ironic, workdir):
    """ironic-inspector 12.5 standalone: one process, SQLite, noauth,
    ``fake://``, no PXE filter, ``introspection_delay = 0``."""
    inspector = upstream.Inspector(
        'sqlite:///%s' % (workdir / 'ironic-inspector.sqlite'), ironic.url)
    try:
        inspector.dbsync().start()
        yield inspector
    finally:
        inspector.close()


def _ironic_pids(ironic):
    """Every process of Ironic's (masters and their workers)."""
    return [pid for proc in ironic.procs for pid in measure.tree(proc.pid)]


def ironic_groups(ironic):
    """One group per Ironic process (its master, its API worker, its
    conductor; and its own database server where it has one): which of
    them works shows where Ironic's ceiling is."""
    groups = [measure.CpuGroup(measure.IRONIC_GROUP + measure.title(pid),
                               lambda pid=pid: [pid])
              for pid in _ironic_pids(ironic)]
    if getattr(ironic, 'database', None):
        groups.append(measure.CpuGroup(
            measure.IRONIC_GROUP + 'mariadbd (its database)',
            lambda: measure.pgrep('-x', 'mariadbd')))
    return groups


def _ironic_sampled(ironic):
    """The last process of each of Ironic's trees: the one doing the
    work (the API worker, the conductor)."""
    return [(pathlib.Path(proc.args[0]).name, measure.tree(proc.pid)[-1])
            for proc in ironic.procs]


def _service_groups():
    """The shared database, broker and coordination servers."""
    return [
        measure.CpuGroup('postgresql', lambda: measure.pgrep('-u',
                                                             'postgres')),
        measure.CpuGroup('rabbitmq', lambda: measure.pgrep('-u',
                                                           'rabbitmq')),
        measure.CpuGroup('redis', lambda: measure.pgrep('-x',
                                                        'redis-server'))]


def _cpu_groups(deployment, ironic):
    def trees(pids):
        return lambda: [p for pid in pids for p in measure.tree(pid)]
    groups = [measure.CpuGroup(role, trees(pids))
              for role, pids in deployment['roles'].items()]
    groups += ironic_groups(ironic)
    return groups + (_service_groups() if deployment.get('services')
                     else [])


def with_totals(cpu, own):
    """Add the totals of the service's processes (the groups ``own``)
    and of Ironic's."""
    ironic = [k for k in cpu if k.startswith(measure.IRONIC_GROUP)]
    return dict(cpu, **{
        measure.OWN_TOTAL: round(sum(cpu[r] for r in own), 3),
        measure.IRONIC_TOTAL: round(sum(cpu[r] for r in ironic), 3)})


def per_node_ms(cpu, count):
    return {k: round(v / count * 1000, 1) for k, v in cpu.items()
            if not k.startswith('_')}


def _net_of_idle(cpu, idle):
    """CPU of the batch minus what the same processes burn idle over
    the same wall time."""
    scale = cpu['_wall_seconds'] / idle['_wall_seconds']
    return {k: round(v - idle[k] * scale, 3) for k, v in cpu.items()
            if not k.startswith('_')}


def measure_idle(groups, settle, seconds):
    """CPU the deployment and the services use with nothing to do,
    after ``settle`` seconds for the work of starting up (the first run of
    the periodic tasks: ``ironic_sync`` lists every Ironic node)."""
    time.sleep(settle)
    meter = measure.CpuMeter(groups).start()
    time.sleep(seconds)
    return meter.stop()


def _memory(named_pids, ironic):
    memory = {name: measure.memory_mb(pid) for name, pid in named_pids}
    for pid in _ironic_pids(ironic):
        memory[measure.IRONIC_GROUP + 'pid %d' % pid] = \
            measure.memory_mb(pid)
    return memory


def run(deployment, ironic, nodes, args):
    """Start every node of ``nodes`` and play its ramdisk; measure.

    :param deployment: ``api_urls``, ``roles`` ({role: [pid]}) and
        ``named_pids`` ([(name, pid)]) of the inspector-ha processes;
        ``services``: whether it uses PostgreSQL, RabbitMQ and Redis.
    """
    uuids, count = list(nodes), len(nodes)
    groups = _cpu_groups(deployment, ironic)
    own = list(deployment['roles'])
    idle = with_totals(measure_idle(groups, args.settle, args.idle), own)
    meter = measure.CpuMeter(groups)
    window = ironic_log.Window(ironic.log_path)
    # NOTE: the ramdisks retry as ironic-python-agent 13 does, whichever
    # service they post to.
    disks = load.TimedRamdisks(ironic.database_url, deployment['api_urls'],
                               nodes, args.concurrency, args.poll_interval,
                               **ramdisk.IPA13)
    disks.start()
    window.start()
    sampler = sampling.Sampler(
        sampling.profiled_pids(deployment['named_pids'],
                               deployment['roles']) +
        _ironic_sampled(ironic),
        args.profile_dir / deployment['phase']) if args.profile_dir \
        else None
    database_before = measure.database_counters(deployment.get('database'))
    meter.start()
    if sampler:
        sampler.start()
    began_wall, began = time.time(), time.monotonic()
    start, accepted = load.start_all(deployment['api_urls'], uuids,
                                     args.concurrency)
    starts_done = time.monotonic() - began
    log('all %d starts answered after %.1f s' % (count, starts_done))
    waited = load.wait_all(deployment['api_urls'][0], accepted,
                           args.timeout)
    detected = time.monotonic() - began
    cpu = with_totals(meter.stop(), own)
    profile = sampler.stop() if sampler else {}
    window.stop()
    memory = _memory(deployment['named_pids'], ironic)
    disks.stop()
    log('batch over after %.1f s; measuring the status reads' % detected)
    database = measure.database_per_node(deployment.get('database'),
                                         database_before, count)
    status_read_ms = sampling.status_read_cost(
        deployment['api_urls'][0], accepted, deployment['api_pids'])
    outcome = load.outcome_of(waited['states'], accepted)
    elapsed = (waited['finished_at'][-1] - began_wall
               if waited['finished_at'] else detected)
    log('batch done in %.1f s: %s' % (elapsed, outcome))
    return {
        'nodes': count, 'concurrency': args.concurrency,
        'elapsed_s': round(elapsed, 2),
        'nodes_per_s': round(outcome['finished_ok'] / elapsed, 2),
        'starts_answered_after_s': round(starts_done, 2),
        'not_started': count - len(accepted),
        'ramdisks_never_posted': disks.unposted,
        'outcome': outcome,
        'start': start.report(), 'continue': disks.outcomes.report(),
        'ironic': ironic_log.analyse(window.calls(), count),
        'cpu_s': cpu, 'idle_cpu_s': idle,
        'cpu_ms_per_node': per_node_ms(cpu, count),
        'cpu_ms_per_node_net_of_idle': per_node_ms(
            _net_of_idle(cpu, idle), count),
        'memory': memory,
        'status_read_cpu_ms': status_read_ms,
        'database_per_node': database,
        'profile': profile,
        'progress_fraction_done_at_s': load.progress(
            waited['finished_at'], began_wall),
    }


def _finish(result, api_urls, burst_nodes, database, uuids, args):
    if burst_nodes:
        log('continue burst: %d ramdisks posting at once' %
            len(burst_nodes))
        result['burst'] = load.continue_burst(
            api_urls, burst_nodes, args.concurrency, args.timeout)
    result['ledger'] = ledger.analyse(database, uuids)
    return result


def cluster_deployment(the_cluster, phase):
    """What :func:`run` needs of a :class:`cluster.Cluster`."""
    procs = the_cluster.apis + the_cluster.workers
    return {
        'api_urls': the_cluster.api_urls,
        'roles': {'inspector-ha APIs': [p.pid for p in the_cluster.apis],
                  'inspector-ha workers': [p.pid for p in
                                           the_cluster.workers]},
        'named_pids': [(p.name, p.pid) for p in procs],
        'api_pids': [p.pid for p in the_cluster.apis],
        'services': True, 'phase': phase,
        'database': the_cluster.database}


def run_split(ironic, workdir, args):
    nodes, burst_nodes = batch_and_burst_nodes(ironic, args)
    worker = dict(CLUSTER_CONF['worker'])
    if args.worker_pool_size:
        worker['pool_size'] = args.worker_pool_size
    if args.cluster_concurrency:
        worker['cluster_concurrency'] = args.cluster_concurrency
    conf = {'worker': worker}
    with split_cluster(ironic, workdir, workers=args.split_workers,
                       conf=conf) as the_cluster:
        deployment = cluster_deployment(the_cluster, 'split')
        log('split cluster up: %s' % ', '.join(
            name for name, _pid in deployment['named_pids']))
        result = run(deployment, ironic, nodes, args)
        _finish(result, the_cluster.api_urls, burst_nodes,
                the_cluster.database, list(nodes), args)
    result['deployment'] = (
        '2 API processes, %d workers (%s threads each, cluster_concurrency '
        '%s), PostgreSQL, RabbitMQ, Redis' % (
            args.split_workers, worker['pool_size'],
            args.cluster_concurrency or 'unset'))
    return result


def run_embedded(ironic, workdir, args):
    nodes, burst_nodes = batch_and_burst_nodes(ironic, args)
    with embedded(ironic, workdir) as (proc, url):
        deployment = {'api_urls': [url],
                      'roles': {'inspector-ha (all-in-one)': [proc.pid]},
                      'named_pids': [('all-in-one', proc.pid)],
                      'api_pids': [proc.pid], 'phase': 'embedded'}
        log('embedded default up at %s' % url)
        result = run(deployment, ironic, nodes, args)
        database = 'sqlite:///%s' % (workdir / 'state' /
                                     'inspector-ha.sqlite')
        _finish(result, [url], burst_nodes, database, list(nodes), args)
    result['deployment'] = ('all-in-one, no configuration: SQLite, '
                            'tooz file://, in-process messaging')
    return result


def run_upstream(ironic, workdir, args):
    """The baseline: the same batch on ironic-inspector 12.5."""
    nodes = create_nodes(ironic, args.nodes, real_size=real_size(args))
    with upstream_inspector(ironic, workdir) as inspector:
        pid = inspector.proc.pid
        deployment = {'api_urls': [inspector.url],
                      'roles': {'ironic-inspector 12.5': [pid]},
                      'named_pids': [('ironic-inspector 12.5', pid)],
                      'api_pids': [pid], 'phase': 'upstream'}
        log('ironic-inspector 12.5 up at %s' % inspector.url)
        result = run(deployment, ironic, nodes, args)
    result['deployment'] = ('ironic-inspector 12.5 standalone: SQLite, '
                            'noauth, fake://, introspection_delay 0')
    return result
