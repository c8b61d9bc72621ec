"""What a thread pays in CPU for each release of the GIL when another
thread wants it (analysis, not a test or a benchmark of the service).

The sqlite3 driver releases the GIL around each call into SQLite, and a
log line's write releases it too. Alone, a thread gets it back at once;
beside a thread running Python, each release is a hand-over, and the
thread's own CPU per call grows. This prints the thread CPU of one read
by key through SQLAlchemy (the service's ``statements.NODE`` on a SQLite
file at the current schema), alone, beside a busy thread and in each of
two threads doing the same::

    .venv/bin/python benchmarks/contention.py [--reads N]
"""

import argparse
import sys
import tempfile
import threading
import time
import uuid as uuidlib

import sqlalchemy as sa

from inspector_ha.db import migration
from inspector_ha.db import nodes
from inspector_ha.db import statements


def _engine(directory):
    url = 'sqlite:///%s/contention.sqlite' % directory
    migration.upgrade(url)
    engine = sa.create_engine(url,
                              connect_args={'check_same_thread': False})
    uuid = str(uuidlib.uuid4())
    with engine.begin() as conn:
        nodes.create(conn, uuid, True, 'contention', None)
    return engine, uuid


def _reads(engine, uuid, count, results):
    """``count`` reads by key in one transaction; appends the thread CPU
    per read, in ms."""
    with engine.connect() as conn, conn.begin():
        began = time.thread_time()
        for _ in range(count):
            conn.execute(statements.NODE, {'b_uuid': uuid}).first()
        results.append((time.thread_time() - began) * 1000 / count)


def _busy(stop):
    while not stop.is_set():
        sum(range(100))


def _in_threads(targets):
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--reads', type=int, default=20000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        engine, uuid = _engine(directory)
        alone, beside, pair = [], [], []
        _reads(engine, uuid, args.reads, alone)
        stop = threading.Event()
        busy = threading.Thread(target=_busy, args=(stop,))
        busy.start()
        _reads(engine, uuid, args.reads, beside)
        stop.set()
        busy.join()
        _in_threads([lambda: _reads(engine, uuid, args.reads, pair)] * 2)
        engine.dispose()
    print('thread CPU per read by key, ms: alone %.4f; beside a thread '
          'running Python %.4f; each of two threads reading %s' % (
              alone[0], beside[0], ' and '.join('%.4f' % v for v in pair)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
