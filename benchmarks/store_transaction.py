"""Thread CPU of one transaction of ``SELECT 1`` through
``Store.transaction``, alone, in one thread, on a fresh PostgreSQL and
MariaDB database (analysis, not a test or a benchmark)::

    .venv/bin/python benchmarks/store_transaction.py [--runs N] [--rounds R]

Prints, per database, the best and the median of ``--rounds`` rounds of
``--runs`` transactions, in us of CPU (and the best in us of wall time).
Compare code back to back, alternating (``PYTHONPATH=<worktree>``
imports another checkout); the first line names the code imported.
"""

import argparse
import statistics
import threading
import time

import sqlalchemy as sa

import testpath  # noqa: F401  (tests/functional on sys.path)

import backends
from inspector_ha.common import retry
from inspector_ha.db import api as db_api

SELECT_ONE = sa.text('SELECT 1')


def _select_one(conn):
    return conn.execute(SELECT_ONE).scalar()


def rounds(url, runs, count):
    """``[(us of CPU, us of wall time) per transaction]``, a round each."""
    store = db_api.Store(url, retry.RetryPolicy(
        'database', 0, 1.0, threading.Event(), db_api.RETRYABLE))
    try:
        for _ in range(200):
            store.transaction(_select_one)
        measured = []
        for _ in range(count):
            cpu, wall = time.thread_time(), time.perf_counter()
            for _ in range(runs):
                store.transaction(_select_one)
            measured.append(((time.thread_time() - cpu) / runs * 1e6,
                             (time.perf_counter() - wall) / runs * 1e6))
        return measured
    finally:
        store.dispose()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=2000)
    parser.add_argument('--rounds', type=int, default=5)
    args = parser.parse_args()
    print('code: %s' % db_api.__file__)
    for name, make_url in (('PostgreSQL', backends.postgres_url),
                           ('MariaDB', backends.mariadb_url)):
        url = make_url()
        try:
            measured = rounds(url, args.runs, args.rounds)
        finally:
            backends.drop_database(url)
        cpu = [m[0] for m in measured]
        print('%s: us of CPU per transaction, best %.1f, median %.1f; '
              'us of wall time, best %.1f' % (
                  name, min(cpu), statistics.median(cpu),
                  min(m[1] for m in measured)))


if __name__ == '__main__':
    main()
