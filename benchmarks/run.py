"""Benchmark: a batch of introspections end to end against a real
Ironic, on ironic-inspector 12.5 (the baseline, each phase on a fresh
Ironic), on a split cluster and on the embedded default, with the ratios
to 12.5; plus recovery times after SIGKILL of a worker and of a leader.

    .venv/bin/python benchmarks/run.py [--nodes N] [--concurrency C]
                                       [--out FILE]

Needs what the functional tests need (PostgreSQL, RabbitMQ and Redis on
their standard loopback ports, Ironic's venv in .venv-ironic; see
``tools/install-test-deps.sh``). Creating the nodes in Ironic is not
measured. Writes ``benchmarks/results/<date>.json`` and ``.md`` (or
``--out``). Not a test: nothing passes or fails. Settings in the
environment (oslo.config's ``OS_<GROUP>__<OPTION>``) reach every process
of every phase, 12.5's and Ironic's too; the results name them in
``meta.environment`` and in the command.
"""

import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
import time

import batches
import failover
import ironic_split
import report
import sampling
import testpath  # noqa: F401  (puts tests/functional on sys.path)
import ironic_server

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--nodes', type=int, default=1000,
                        help='introspections in each batch (1000)')
    parser.add_argument('--concurrency', type=int, default=200,
                        help='concurrent start posters and ramdisks (200)')
    parser.add_argument('--out', type=pathlib.Path,
                        help='JSON results file (default '
                             'benchmarks/results/<date>.json; the summary '
                             'goes next to it as .md)')
    parser.add_argument('--poll-interval', type=float, default=1.0,
                        help='how often the simulated ramdisks read '
                             "Ironic's database for powered-on nodes (1 s)")
    parser.add_argument('--timeout', type=float,
                        help='longest wait for a batch (default 120 s + '
                             '1 s per node)')
    parser.add_argument('--settle', type=float, default=30.0,
                        help='seconds to let a deployment settle after it '
                             'starts, before its idle CPU is measured (30)')
    parser.add_argument('--idle', type=float, default=20.0,
                        help='seconds of idle CPU measured before each '
                             'batch, subtracted in the "net" figures (20)')
    parser.add_argument('--trials', type=int, default=3,
                        help='SIGKILLs of a worker and of a leader (3)')
    parser.add_argument('--worker-pool-size', type=int,
                        help="the split cluster's [worker] pool_size "
                             '(default: the default, the number of CPUs)')
    parser.add_argument('--cluster-concurrency', type=int,
                        help="the split cluster's [worker] "
                             'cluster_concurrency (default: unset, no '
                             'cluster limit)')
    parser.add_argument('--split-workers', type=int, default=3,
                        help="the split cluster's worker processes (3)")
    parser.add_argument('--ironic', choices=sorted(report.IRONIC_LAYOUTS),
                        default='all-in-one',
                        help='all-in-one: the one-process Ironic on SQLite '
                             '(the default); split: ironic-api and '
                             'ironic-conductor over JSON-RPC on MariaDB')
    parser.add_argument('--ironic-api-workers', type=int, default=1,
                        help="the split Ironic's [api] api_workers (1; "
                             'Ironic 39 fails to bind a second)')
    parser.add_argument('--ironic-pool-size', type=int, default=300,
                        help="the split Ironic's [conductor] "
                             'workers_pool_size (300)')
    parser.add_argument('--ironic-db-pool-size', type=int,
                        default=ironic_split.DB_POOL_SIZE,
                        help="the split Ironic's [database] max_pool_size "
                             "(%d; runs before 2026-11-29 had oslo.db's "
                             'default, 5)' % ironic_split.DB_POOL_SIZE)
    batches.add_post_size_option(parser)
    parser.add_argument('--no-profile', action='store_true',
                        help='do not sample the processes with py-spy '
                             '(they are sampled at %d Hz when py-spy may '
                             'attach)' % sampling.RATE)
    parser.add_argument('--skip', action='append', default=[],
                        choices=['upstream', 'embedded', 'failover'],
                        help='leave out a phase (repeatable)')
    args = parser.parse_args(argv)
    if args.timeout is None:
        args.timeout = 120.0 + args.nodes
    return args


def _output(command):
    try:
        return subprocess.run(command, capture_output=True, text=True,
                              check=False, cwd=testpath.REPO_ROOT,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return 'unknown'


def ironic_version():
    venv = os.environ.get('INSPECTOR_HA_IRONIC_VENV',
                          testpath.REPO_ROOT / '.venv-ironic')
    return _output([str(pathlib.Path(venv) / 'bin' / 'python'), '-c',
                    'import importlib.metadata as m; '
                    'print(m.version("ironic"))'])


def code_under_test():
    """Which inspector_ha the spawned processes import, and its commit."""
    try:
        where = subprocess.run(
            [sys.executable, '-c', 'import inspector_ha; '
             'print(inspector_ha.__file__)'], capture_output=True,
            text=True, check=False, cwd='/', timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        where = ''
    package = pathlib.Path(where).parent
    if package != testpath.REPO_ROOT / 'inspector_ha':
        return '%s (from PYTHONPATH)' % package
    commit = _output(['git', 'rev-parse', '--short', 'HEAD'])
    if _output(['git', 'status', '--porcelain', '--', 'inspector_ha']):
        commit += ' plus uncommitted changes to inspector_ha/'
    return commit


#: oslo.config's environment settings (not OS_PASSWORD and the like).
SETTING = re.compile(r'^OS_[A-Z0-9_]+__[A-Z0-9_]+$')


def oslo_environment():
    """oslo.config's settings in the environment: they reach every
    process a run starts (the service's, Ironic's and 12.5's) and
    override their configuration files."""
    return {k: v for k, v in sorted(os.environ.items()) if SETTING.match(k)}


def command(script, argv, environment):
    """The command line that repeats a run, its settings first."""
    return ' '.join(['%s=%s' % (k, shlex.quote(v))
                     for k, v in environment.items()] +
                    ['.venv/bin/python', 'benchmarks/%s' % script] +
                    [shlex.quote(a) for a in argv])


def meta(args, argv, script='run.py'):
    commit = code_under_test()
    environment = oslo_environment()
    return {'date': time.strftime('%Y-%m-%d %H:%M:%S %Z'),
            'command': command(script, argv, environment),
            'environment': environment,
            'nodes': args.nodes, 'concurrency': args.concurrency,
            'poll_interval_s': args.poll_interval,
            'cores': os.cpu_count(),
            'loadavg': ' '.join(_output(['cat', '/proc/loadavg'])
                                .split()[:3]),
            'commit': commit, 'ironic_version': ironic_version(),
            'ironic_layout': args.ironic,
            'ironic_layout_text': report.IRONIC_LAYOUTS[args.ironic].format(
                api=args.ironic_api_workers, pool=args.ironic_pool_size,
                db_pool=args.ironic_db_pool_size),
            'cluster_conf': batches.CLUSTER_CONF}


def _ironic(args):
    if args.ironic == 'split':
        return ironic_split.SplitIronic(args.ironic_api_workers,
                                        args.ironic_pool_size,
                                        args.ironic_db_pool_size)
    return ironic_server.Ironic()


#: The batch phases, in the order a run takes them: 12.5, then the two
#: deployments of inspector-ha (the failover trials come last).
BATCH_PHASES = {'upstream': batches.run_upstream,
                'split': batches.run_split,
                'embedded': batches.run_embedded}


def phase(name, func, tmp, args):
    batches.log('== %s' % name)
    with _ironic(args) as ironic:
        return func(ironic, pathlib.Path(tempfile.mkdtemp(
            prefix=name + '-', dir=tmp)), args)


def _failover(ironic, workdir, args):
    workers = failover.worker_kill(ironic, workdir / 'worker-kill',
                                   args.trials, batches.real_size(args))
    leaders = failover.leader_kill(ironic, workdir / 'leader-kill',
                                   args.trials)
    return failover.summary(workers, leaders)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    results = {'meta': meta(args, argv)}
    out = args.out or RESULTS / (time.strftime('%Y-%m-%d') + '.json')
    with tempfile.TemporaryDirectory(prefix='inspector-ha-bench-') as tmp:
        args.profile_dir = None if args.no_profile or not \
            sampling.can_sample() else out.with_name(out.stem + '-profiles')
        for name, func in BATCH_PHASES.items():
            if name not in args.skip:
                results[name] = phase(name, func, tmp, args)
        if 'failover' not in args.skip:
            results['failover'] = phase('failover', _failover, tmp, args)
    md_path = report.write(results, out)
    print(md_path.read_text())
    print('Results: %s and %s' % (out, md_path))
    return 0


if __name__ == '__main__':
    sys.exit(main())
