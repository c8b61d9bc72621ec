"""Benchmark: what a site would pick instead, side by side (issue 56).
The same batch on ironic-inspector 12.5, on inspector-ha (the embedded
default and a split cluster, on a one-process Ironic and on the
two-conductor one) and on Ironic 39's own inspection (one process; one
API and two conductors), then the same fault for each:
a conductor SIGKILLed mid-batch for Ironic, a worker for inspector-ha,
with the same count of finished, failed and stuck nodes.

    .venv/bin/python benchmarks/versus_builtin.py [--nodes N]
        [--concurrency C] [--out FILE]

Needs what benchmarks/run.py needs, and MariaDB for the split Ironic.
Writes ``benchmarks/results/<date>-versus-builtin.json`` and ``.md``.
"""

import argparse
import json
import pathlib
import sys
import tempfile
import time

import batches
import builtin
import ironic_split
import load
import run as run_mod
import testpath  # noqa: F401  (tests/functional on sys.path)
import backends
import ironic_server
import ramdisk

PHASES = ('upstream', 'embedded', 'split', 'split-on-two-conductors',
          'builtin', 'builtin-split')
FAULTS = ('builtin-split', 'split')


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--nodes', type=int, default=100)
    parser.add_argument('--concurrency', type=int, default=30)
    parser.add_argument('--out', type=pathlib.Path)
    parser.add_argument('--settle', type=float, default=10.0)
    parser.add_argument('--idle', type=float, default=10.0)
    parser.add_argument('--poll-interval', type=float, default=1.0)
    parser.add_argument('--timeout', type=float, default=300.0)
    parser.add_argument('--skip', action='append', default=[],
                        choices=PHASES + tuple('fault-' + f for f in FAULTS))
    batches.add_post_size_option(parser)
    args = parser.parse_args(argv)
    args.profile_dir = None
    # NOTE: what run.meta and batches read of run.py's options.
    args.ironic, args.ironic_api_workers = 'all-in-one', 1
    args.ironic_pool_size = 300
    args.ironic_db_pool_size = ironic_split.DB_POOL_SIZE
    args.split_workers = 3
    args.worker_pool_size = args.cluster_concurrency = None
    return args


def _inspector_phase(func, args, tmp, ironic_class=ironic_server.Ironic):
    with ironic_class() as ironic:
        return func(ironic, pathlib.Path(tempfile.mkdtemp(dir=tmp)), args)


def split_with_a_worker_killed(args, tmp):
    """inspector-ha's split cluster, a worker SIGKILLed once a third of
    the nodes finished; counted as the Ironic fault is."""
    with ironic_server.Ironic() as ironic:
        nodes = batches.create_nodes(ironic, args.nodes,
                                     real_size=batches.real_size(args))
        workdir = pathlib.Path(tempfile.mkdtemp(dir=tmp))
        with batches.split_cluster(ironic, workdir) as the_cluster:
            urls, uuids = the_cluster.api_urls, list(nodes)
            disks = load.TimedRamdisks(ironic.database_url, urls, nodes,
                                       args.concurrency, args.poll_interval,
                                       **ramdisk.IPA13)
            disks.start()
            began = time.time()
            _start, accepted = load.start_all(urls, uuids, args.concurrency)
            backends.wait_for(lambda: sum(
                1 for s in load.statuses(urls[0], set(uuids)).values()
                if s.get('finished')) >= len(uuids) // 3, args.timeout,
                interval=0.2)
            victim = the_cluster.workers[0]
            victim.kill()
            batches.log('SIGKILLed worker %d' % victim.pid)
            waited = load.wait_all(urls[0], accepted, args.timeout)
            disks.stop()
    outcome = load.outcome_of(waited['states'], uuids)
    return {'nodes': len(uuids), 'outcome': outcome,
            'ramdisks_gave_up': len(disks.gave_up),
            'elapsed_s': round(waited['finished_at'][-1] - began, 2)
            if waited['finished_at'] else None,
            'deployment': 'inspector-ha split cluster, worker SIGKILLed'}


def _phases(args, tmp):
    return {
        'upstream': lambda: _inspector_phase(batches.run_upstream, args,
                                             tmp),
        'embedded': lambda: _inspector_phase(batches.run_embedded, args,
                                             tmp),
        'split': lambda: _inspector_phase(batches.run_split, args, tmp),
        # NOTE: the Ironic of builtin-split (its inspect interface unused):
        # inspector-ha's throughput on the same Ironic.
        'split-on-two-conductors': lambda: _inspector_phase(
            batches.run_split, args, tmp, builtin.SplitInspectingIronic),
        'builtin': lambda: builtin.run_one_process(args),
        'builtin-split': lambda: builtin.run_split(args),
        'fault-builtin-split': lambda: builtin.run_split(
            args, fault=builtin.kill_a_conductor),
        'fault-split': lambda: split_with_a_worker_killed(args, tmp)}


ROWS = (('throughput, nodes/s', ('nodes_per_s',)),
        ('last finish after, s', ('elapsed_s',)),
        ('finished / failed / stuck', ('outcome',)),
        ('Ironic CPU per node, ms', ('cpu_ms_per_node',
                                     'ironic (all its processes)')),
        ('machine CPU per node, ms', ('cpu_ms_per_node',
                                      'machine (all processes)')),
        ('start p50 / p99, ms', ('start',)),
        ('ramdisk post p50 / p99, ms', ('continue',)),
        ('ramdisks that gave up', ('ramdisks_gave_up',)))


def _cell(result, path):
    value = result
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if path == ('outcome',) and value:
        return '%(finished_ok)s / %(error)s / %(stuck)s' % value
    if path in (('start',), ('continue',)) and value:
        return '%s / %s' % (value.get('p50_ms'), value.get('p99_ms'))
    return '' if value is None else str(value)


def table(results):
    names = [n for n in results if n != 'meta']
    lines = ['| | %s |' % ' | '.join(names),
             '|---|' + '---|' * len(names)]
    for label, path in ROWS:
        lines.append('| %s | %s |' % (label, ' | '.join(
            _cell(results[n], path) for n in names)))
    return '\n'.join(lines) + '\n'


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    results = {'meta': dict(run_mod.meta(args, argv, 'versus_builtin.py'))}
    out = args.out or run_mod.RESULTS / (
        time.strftime('%Y-%m-%d') + '-versus-builtin.json')
    with tempfile.TemporaryDirectory(prefix='versus-builtin-') as tmp:
        for name, func in _phases(args, tmp).items():
            if name not in args.skip:
                batches.log('== %s' % name)
                results[name] = func()
    out.write_text(json.dumps(results, indent=1, default=str) + '\n')
    md = out.with_suffix('.md')
    md.write_text('# Versus Ironic built-in inspection\n\n%s\n```\n%s\n```'
                  '\n' % (table(results), results['meta']['command']))
    print(md.read_text())
    return 0


if __name__ == '__main__':
    sys.exit(main())
