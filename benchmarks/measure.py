"""Measuring tools: CPU and memory from /proc, latencies and outcomes.

CPU of a set of processes is the sum over the set of utime + stime +
cutime + cstime (/proc/<pid>/stat). A child that exits and is reaped by
a member of the set moves its whole CPU time into its parent's cutime,
so the difference of two such sums is the CPU the set used in between,
short-lived children (PostgreSQL backends) included.
"""

import math
import os
import pathlib
import resource
import subprocess
import threading
import time

import requests
import sqlalchemy

CLK_TCK = os.sysconf('SC_CLK_TCK')
OWN_TOTAL = 'the service (all its processes)'
#: The name of each Ironic process's CPU group starts with this.
IRONIC_GROUP = 'Ironic process: '
IRONIC_TOTAL = 'ironic (all its processes)'
MACHINE = 'machine (all processes)'


# --- processes ---------------------------------------------------------------

def _stat_fields(pid):
    text = pathlib.Path('/proc/%d/stat' % pid).read_text()
    # comm may contain spaces and parentheses: split after the last ')'.
    return text[text.rindex(')') + 2:].split()


def cpu_seconds(pid):
    """utime + stime + cutime + cstime of one process, in seconds; 0 if
    it is gone."""
    try:
        fields = _stat_fields(pid)
    except (OSError, ValueError):
        return 0.0
    # fields[0] is field 3 (state): utime..cstime are fields 14..17.
    return sum(int(f) for f in fields[11:15]) / CLK_TCK


def _children(pid):
    try:
        kids = []
        for task in pathlib.Path('/proc/%d/task' % pid).iterdir():
            kids += [int(p) for p in (task / 'children').read_text().split()]
        return kids
    except OSError:
        return []


def tree(pid):
    """``pid`` and all its descendants alive right now."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(_children(current))
    return found


def pgrep(*args):
    """PIDs that ``pgrep *args`` lists (empty when none or no pgrep)."""
    try:
        out = subprocess.run(['pgrep', *args], capture_output=True,
                             text=True, check=False).stdout
    except OSError:
        return []
    return [int(p) for p in out.split()]


def title(pid):
    """The process title, short: ``ironic: ServiceWrapper worker(0)``."""
    try:
        raw = pathlib.Path('/proc/%d/cmdline' % pid).read_bytes()
    except OSError:
        return 'pid %d' % pid
    text = raw.replace(b'\0', b' ').decode(errors='replace').strip()
    return text.split(' [')[0][:40]


def status_kb(pid, key):
    """A ``kB`` value of /proc/<pid>/status (VmHWM, VmRSS); None if gone."""
    try:
        for line in pathlib.Path('/proc/%d/status' % pid).read_text() \
                .splitlines():
            if line.startswith(key + ':'):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def memory_mb(pid):
    """Peak (VmHWM) and current (VmRSS) resident memory in MB."""
    hwm, rss = status_kb(pid, 'VmHWM'), status_kb(pid, 'VmRSS')
    return {'peak_rss_mb': round(hwm / 1024, 1) if hwm else None,
            'rss_mb': round(rss / 1024, 1) if rss else None}


class CpuGroup:
    """A named set of processes, found again at each snapshot by
    ``finder`` (a callable returning PIDs)."""

    def __init__(self, name, finder):
        self.name = name
        self._finder = finder

    def snapshot(self):
        return sum(cpu_seconds(pid) for pid in self._finder())


def machine_busy_seconds():
    """CPU seconds the whole machine spent not idle (all cores)."""
    fields = [int(f) for f in
              pathlib.Path('/proc/stat').read_text().split('\n')[0]
              .split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / CLK_TCK


def self_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class CpuMeter:
    """CPU used by each group between :meth:`start` and :meth:`stop`."""

    def __init__(self, groups):
        self._groups = list(groups)
        self._before = None
        self.used = {}

    def _take(self):
        values = {g.name: g.snapshot() for g in self._groups}
        values['benchmark client'] = self_cpu_seconds()
        values[MACHINE] = machine_busy_seconds()
        values['_wall'] = time.monotonic()
        return values

    def start(self):
        self._before = self._take()
        return self

    def stop(self):
        after = self._take()
        self.used = {k: round(after[k] - self._before[k], 3) for k in after}
        wall = self.used.pop('_wall')
        self.used['_wall_seconds'] = round(wall, 3)
        return self.used


# --- latencies and outcomes --------------------------------------------------

def percentile(values, pct):
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def summary_ms(seconds):
    """p50/p99/max/mean in milliseconds of a list of durations in s."""
    if not seconds:
        return {'count': 0, 'p50_ms': None, 'p99_ms': None,
                'max_ms': None, 'mean_ms': None}
    return {'count': len(seconds),
            'p50_ms': round(percentile(seconds, 50) * 1000, 1),
            'p99_ms': round(percentile(seconds, 99) * 1000, 1),
            'max_ms': round(max(seconds) * 1000, 1),
            'mean_ms': round(sum(seconds) / len(seconds) * 1000, 1)}


def classify(exc):
    """A short name for a failed HTTP attempt."""
    text = str(exc)
    if 'Connection refused' in text or 'Errno 111' in text:
        return 'refused'
    # NOTE: ironic-python-agent 13 retries a connection that timed out
    # (requests' ConnectTimeout is a ConnectionError), not an answer
    # that did not come in time: the two are counted apart.
    if isinstance(exc, requests.ConnectTimeout):
        return 'connect timeout'
    if isinstance(exc, requests.Timeout):
        return 'read timeout'
    if 'reset' in text.lower() or 'RemoteDisconnected' in text:
        return 'reset'
    return 'connection error'


class Outcomes:
    """Thread-safe record of timed HTTP attempts: latency of every
    attempt that got an answer, counters by status code or failure."""

    def __init__(self):
        self._lock = threading.Lock()
        self.latencies = []
        self.codes = {}
        self.failures = {}
        self._in_flight = 0
        self.max_in_flight = 0

    def post(self, url, not_retried=None, **kwargs):
        """POST, recording the outcome; return the status code, None
        for a refused or broken connection (which ironic-python-agent
        retries), or ``not_retried`` for any other failure, such as an
        answer that did not come in time."""
        return self.request('POST', url, not_retried, **kwargs)

    def request(self, method, url, not_retried=None, **kwargs):
        """:meth:`post` with another method."""
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        began = time.monotonic()
        try:
            resp = requests.request(method, url, **kwargs)
        except requests.RequestException as exc:
            self._count(self.failures, classify(exc), None)
            return None if isinstance(
                exc, requests.ConnectionError) else not_retried
        else:
            self._count(self.codes, str(resp.status_code),
                        time.monotonic() - began)
            return resp.status_code
        finally:
            with self._lock:
                self._in_flight -= 1

    def _count(self, table, key, latency):
        with self._lock:
            table[key] = table.get(key, 0) + 1
            if latency is not None:
                self.latencies.append(latency)

    def report(self):
        with self._lock:
            codes = dict(self.codes)
            failures = dict(self.failures)
            latencies = list(self.latencies)

        def count(prefix):
            return sum(n for c, n in codes.items() if c.startswith(prefix))
        return dict(summary_ms(latencies), codes=codes, failures=failures,
                    refused=failures.get('refused', 0),
                    http_4xx=count('4'), http_5xx=count('5'),
                    max_in_flight=self.max_in_flight)


# --- the database ------------------------------------------------------------

#: PostgreSQL's activity counters of one database (pg_stat_database).
DATABASE_COUNTERS = ('xact_commit', 'xact_rollback', 'tup_returned',
                     'tup_fetched', 'tup_inserted', 'tup_updated',
                     'tup_deleted')
#: A PostgreSQL 15 backend that goes idle reports its counters within
#: 10 s (PGSTAT_IDLE_INTERVAL); read them after that.
COUNTERS_FLUSHED_S = 11


def database_counters(url):
    """``{counter: value}`` of PostgreSQL database ``url`` (None when
    ``url`` is not PostgreSQL)."""
    if not url or not url.startswith('postgresql'):
        return None
    engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.NullPool)
    try:
        with engine.connect() as conn:
            row = conn.execute(sqlalchemy.text(
                'SELECT %s FROM pg_stat_database WHERE datname = '
                'current_database()' % ', '.join(DATABASE_COUNTERS))).one()
    finally:
        engine.dispose()
    return dict(zip(DATABASE_COUNTERS, row))


def database_per_node(url, before, count):
    """The database's work per introspection over the batch (status
    reads included), or None."""
    if before is None:
        return None
    time.sleep(COUNTERS_FLUSHED_S)
    after = database_counters(url)
    return {k: round((after[k] - before[k]) / count, 1)
            for k in DATABASE_COUNTERS}
