"""A deployment idle: each process's CPU over a window once it has
settled (analysis, not a test or a benchmark of a batch)::

    .venv/bin/python benchmarks/idle.py [--settle 20] [--window 60] \
        [--deployment split|embedded]

Starts a private Ironic 39 and the benchmark's split cluster (2 APIs, 3
workers, the shipped defaults; PostgreSQL, RabbitMQ and Redis) or the
embedded default (one process, no configuration file), waits
``--settle`` seconds, and prints the share of a core each process used
over the next ``--window`` seconds: what every member's background
(heartbeats, the group probe, the backend watch, campaigns) costs,
which a batch's own CPU includes. Compare runs back to back,
alternating (``PYTHONPATH=<worktree>`` imports another checkout). With
``THREAD_CPU_DIR`` and ``benchmarks/thread_cpu`` on ``PYTHONPATH`` as
well, ``--tables DIR`` copies its tables at both ends of the window
(start from an empty ``THREAD_CPU_DIR``: the whole directory is copied;
the tables are rewritten every 5 s, so take a window of a multiple of
5 s). A process that exits during the window shows a negative share.
"""

import argparse
import contextlib
import os
import pathlib
import shutil
import sys
import tempfile
import time

import batches
import measure
import testpath  # noqa: F401  (tests/functional on sys.path)
import ironic_server


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--settle', type=float, default=20.0)
    parser.add_argument('--window', type=float, default=60.0)
    parser.add_argument('--deployment', choices=('split', 'embedded'),
                        default='split')
    parser.add_argument('--tables', type=pathlib.Path,
                        help='copy thread_cpu tables here (began/, ended/)')
    return parser.parse_args(argv)


def _copy_tables(tables, name):
    if tables is not None:
        shutil.copytree(os.environ['THREAD_CPU_DIR'], tables / name,
                        dirs_exist_ok=True)


@contextlib.contextmanager
def _deployment(kind, ironic, workdir):
    """``[(name, pid)]`` of the deployment's processes, while it runs."""
    if kind == 'embedded':
        with batches.embedded(ironic, workdir) as (proc, _url):
            yield [('all-in-one', proc.pid)]
        return
    with batches.split_cluster(ironic, workdir) as cluster:
        yield [(p.name, p.pid) for p in cluster.apis + cluster.workers]


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    with ironic_server.Ironic() as ironic, \
            tempfile.TemporaryDirectory(prefix='inspector-ha-idle-') as tmp:
        with _deployment(args.deployment, ironic,
                         pathlib.Path(tmp)) as pids:
            time.sleep(args.settle)
            _copy_tables(args.tables, 'began')
            began = time.monotonic()
            before = {name: measure.cpu_seconds(pid) for name, pid in pids}
            time.sleep(args.window)
            wall = time.monotonic() - began
            used = {name: measure.cpu_seconds(pid) - before[name]
                    for name, pid in pids}
            _copy_tables(args.tables, 'ended')
    for name, seconds in used.items():
        print('%-10s %5.2f%% of a core' % (name, 100 * seconds / wall))
    print('%-10s %5.2f%% of a core over %.0f s' % (
        'all', 100 * sum(used.values()) / wall, wall))
    return 0


if __name__ == '__main__':
    sys.exit(main())
