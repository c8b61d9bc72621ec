"""Thread CPU time per function of the service, for finding where its
own CPU goes (analysis, not a test or a benchmark).

Put this directory first on ``PYTHONPATH`` and set ``THREAD_CPU_DIR``;
every process whose program name contains ``inspector-ha`` then wraps
the functions of :data:`TARGETS` (and ``Store.transaction``, keyed by the
function it runs, and the Ironic facade's calls, keyed by call) so that
each call adds the CPU time its thread spent inside (inclusive) to a
table, with the cyclic garbage collector's CPU per generation and each
thread's CPU by thread name (or class), in ms, written every 5 s to
``$THREAD_CPU_DIR/<program>-<pid>.txt`` (creating
or touching ``$THREAD_CPU_DIR/clear`` starts the tables again, and
``$THREAD_CPU_DIR/write`` writes them, within a second)::

    THREAD_CPU_DIR=/tmp/cpu PYTHONPATH=benchmarks/thread_cpu \\
        .venv/bin/python benchmarks/run.py --nodes 200 --skip upstream \\
        --skip failover --no-profile

Unlike a sampling profiler it counts CPU, not time on the stack (a
thread waiting for PostgreSQL or for a core counts nothing), and unlike
a tracing one it costs two clock reads per wrapped call. The tables
include whatever the processes did after the batch (the status reads,
then the continue burst): touch ``write`` when the log says "batch
over", which comes before both ("batch done" comes after the status
reads).

With ``THREAD_CPU_YAPPI=1`` as well, each process is profiled by yappi
instead (CPU clock, every thread; ``pip install yappi`` into the
venv): every function's own and inclusive CPU, saved every 10 s in
pstats form to ``$THREAD_CPU_DIR/<program>-<pid>.pstat``, read with
``python -m pstats``; creating or touching ``$THREAD_CPU_DIR/clear``
(say when the log says the service is up) clears what was counted until
then, within a second. The tracer makes every call slower, so read the
shares, not the milliseconds.
"""

import collections
import functools
import importlib
import itertools
import os
import sys
import threading
import time

#: (module, class or None, function) wrapped in each service process.
TARGETS = [
    ('inspector_ha.messaging.queue', 'Consumer', '_one'),
    ('inspector_ha.engine.worker', 'Worker', 'handle'),
    ('inspector_ha.engine.worker', 'Worker', '_committed'),
    ('inspector_ha.engine.worker', 'Worker', '_log'),
    ('inspector_ha.engine.tasks', 'Tasks', 'prepare'),
    ('inspector_ha.engine.tasks', 'Tasks', 'run'),
    ('inspector_ha.coordination.tooz_backend', '_Lock', 'try_acquire'),
    ('inspector_ha.coordination.tooz_backend', '_Lock', 'release'),
    ('inspector_ha.api.v1', 'V1', 'start'),
    ('inspector_ha.api.v1', 'V1', 'continue_'),
    ('inspector_ha.api.v1', 'V1', 'status'),
    ('inspector_ha.api.v1', 'V1', '_lookup'),
    ('inspector_ha.api.nodes', 'Nodes', 'publish'),
    ('inspector_ha.api.checks', None, 'check_startable'),
    ('inspector_ha.rules.engine', None, 'apply'),
    ('inspector_ha.processing.changes', None, 'apply'),
    ('inspector_ha.ironic.client', 'Ironic', '_request'),
    ('logging', 'Handler', 'handle'),
    ('flask.app', 'Flask', 'full_dispatch_request'),
    ('cheroot.server', 'HTTPConnection', 'communicate'),
    ('cheroot.server', 'HTTPRequest', 'respond'),
    # the driver's own work: a statement on its cursor, a commit
    ('sqlalchemy.engine.default', 'DefaultDialect', 'do_executemany'),
    ('sqlalchemy.engine.default', 'DefaultDialect', 'do_commit'),
    # a transaction's own steps: SQLite's write lock, SQLAlchemy's begin
    # and commit, a connection taken from the pool
    ('inspector_ha.db.api', None, '_begin_immediate'),
    ('sqlalchemy.engine.base', 'Connection', 'begin'),
    ('sqlalchemy.engine.base', 'RootTransaction', 'commit'),
    ('sqlalchemy.pool.base', 'Pool', 'connect'),
    # SQLAlchemy's: one statement (compiling it when its cache misses),
    # a compilation
    ('sqlalchemy.engine.base', 'Connection', '_execute_clauseelement'),
    ('sqlalchemy.sql.compiler', 'SQLCompiler', '__init__'),
]
_TOTALS = collections.defaultdict(lambda: [0, 0.0])
#: CPU when the table was last cleared: per thread name, and 'process'.
_BASE = {}


def _timed(label, func, key_arg=None):
    @functools.wraps(func)
    def timed(*args, **kwargs):
        key = label
        if key_arg is not None:
            key += ':' + ' '.join(str(getattr(
                args[key_arg], '__name__', args[key_arg])).split())[:90]
        start = time.thread_time()
        try:
            return func(*args, **kwargs)
        finally:
            total = _TOTALS[key]
            total[0] += 1
            total[1] += time.thread_time() - start
    return timed


def _wrap(module, owner, name, key_arg=None):
    target = importlib.import_module(module)
    holder = getattr(target, owner) if owner else target
    setattr(holder, name, _timed('%s.%s' % (owner or module.rsplit(
        '.', 1)[1], name), getattr(holder, name), key_arg))


def _write(path):
    lines = ['%-58s %7d %10.1f ms %8.3f ms/call' % (
        key, calls, seconds * 1000, seconds * 1000 / calls)
        for key, (calls, seconds) in sorted(
            _TOTALS.items(), key=lambda item: -item[1][1])]
    lines.append('process CPU %.0f ms' % (
        _process_ms() - _BASE.get('process', 0)))
    lines += _by_thread()
    with open(path, 'w') as out:
        out.write('\n'.join(lines) + '\n')


def _process_ms():
    return time.process_time() * 1000


def _by_thread():
    """Each live thread's CPU since the table was cleared, most first."""
    used = _by_thread_ms()
    used.subtract({name: _BASE.get(name, 0) for name in used})
    return ['thread %-51s %10.0f ms' % item for item in used.most_common()]


def _by_thread_ms():
    """Each live thread's CPU (its name, from /proc); the names of Python
    threads are those given to ``threading``."""
    names = {thread.native_id: _thread_name(thread)
             for thread in threading.enumerate()}
    ticks = os.sysconf('SC_CLK_TCK')
    used = collections.Counter()
    for task in os.listdir('/proc/self/task'):
        try:
            with open('/proc/self/task/%s/stat' % task) as stat:
                fields = stat.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        name = names.get(int(task), 'native %s' % task)
        used[name.rstrip('0123456789_-')] += (
            int(fields[11]) + int(fields[12])) * 1000 / ticks
    return used


def _thread_name(thread):
    """Its name; for a thread named only by its number, its class."""
    if not thread.name.startswith('Thread-') or '(' in thread.name:
        return thread.name
    return 'Thread of %s.%s' % (type(thread).__module__,
                                type(thread).__qualname__)


def _count_gc():
    """The cyclic collector's CPU, per generation, in the table."""
    import gc
    began = {}

    def callback(phase, info):
        if phase == 'start':
            began[threading.get_ident()] = time.thread_time()
            return
        start = began.pop(threading.get_ident(), None)
        if start is not None:
            total = _TOTALS['gc generation %d' % info['generation']]
            total[0] += 1
            total[1] += time.thread_time() - start
    gc.callbacks.append(callback)


def _install(directory):
    _count_gc()
    for module, owner, name in TARGETS:
        _wrap(module, owner, name)
    _wrap('inspector_ha.db.api', 'Store', 'transaction', key_arg=1)
    _wrap('inspector_ha.ironic.client', 'Ironic', '_measured', key_arg=1)
    _wrap('sqlalchemy.engine.default', 'DefaultDialect', 'do_execute',
          key_arg=2)
    path = os.path.join(directory, '%s-%d.txt' % (
        os.path.basename(sys.argv[0]), os.getpid()))

    clear = _Touched(os.path.join(directory, 'clear'))
    write = _Touched(os.path.join(directory, 'write'))

    def write_every_5_s():
        for second in itertools.count(1):
            threading.Event().wait(1)
            if clear():
                _TOTALS.clear()
                _BASE.update(_by_thread_ms(), process=_process_ms())
            if write() or second % 5 == 0:
                _write(path)
    threading.Thread(target=write_every_5_s, daemon=True).start()


class _Touched:
    """Whether the file at ``path`` was created or touched since the last
    call (each process of a cluster sees it; none removes it)."""

    def __init__(self, path):
        self._path = path
        self._seen = self._mtime()

    def _mtime(self):
        try:
            return os.stat(self._path).st_mtime_ns
        except OSError:
            return None

    def __call__(self):
        mtime = self._mtime()
        touched = mtime is not None and mtime != self._seen
        self._seen = mtime
        return touched


def _profile(directory):
    import yappi
    yappi.set_clock_type('cpu')
    yappi.start(builtins=False, profile_threads=True)
    path = os.path.join(directory, '%s-%d.pstat' % (
        os.path.basename(sys.argv[0]), os.getpid()))

    clear = _Touched(os.path.join(directory, 'clear'))

    def save_every_10_s():
        for second in itertools.count(1):
            threading.Event().wait(1)
            if clear():
                yappi.clear_stats()
            if second % 10 == 0:
                yappi.get_func_stats().save(path, type='pstat')
    threading.Thread(target=save_every_10_s, daemon=True).start()


if os.environ.get('THREAD_CPU_DIR') and 'inspector-ha' in sys.argv[0]:
    if os.environ.get('THREAD_CPU_YAPPI'):
        _profile(os.environ['THREAD_CPU_DIR'])
    else:
        _install(os.environ['THREAD_CPU_DIR'])
