"""Where a process's CPU goes during a batch: py-spy samples it (active
threads only; stacks whose leaf waits are counted apart) and the working
samples are ranked by library on the stack, by inspector_ha function
(inclusive: the function or anything it calls) and by leaf function
(self); and what one status read costs the API.

py-spy comes from PyPI (``tools/install-test-deps.sh`` installs it in
``.venv``); it needs ptrace rights over the process (root, or
``kernel.yama.ptrace_scope`` 0 for the same user).
"""

import collections
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import requests

import measure

#: py-spy's default is 100 samples a second; this is light enough to run
#: on every profiled process of a batch without slowing it down.
RATE = 50
_LINE = re.compile(r':\d+\)$')


def _py_spy():
    found = pathlib.Path(sys.executable).parent / 'py-spy'
    return str(found) if found.exists() else shutil.which('py-spy')


class Sampler:
    """py-spy recording the processes ``named_pids`` ([(name, pid)])
    into ``directory`` between :meth:`start` and :meth:`stop`."""

    def __init__(self, named_pids, directory, rate=RATE):
        self._targets = list(named_pids)
        self._dir = pathlib.Path(directory)
        self._rate = rate
        self._procs = []

    def start(self):
        binary = _py_spy()
        if binary is None:
            return self
        self._dir.mkdir(parents=True, exist_ok=True)
        for name, pid in self._targets:
            out = self._dir / ('%s.txt' % name)
            self._procs.append((name, out, subprocess.Popen(
                [binary, 'record', '--pid', str(pid), '--rate',
                 str(self._rate), '--format', 'raw', '--nonblocking',
                 '--output', str(out)], stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True)))
        return self

    def stop(self, top=12):
        """``{name: {'samples', 'inclusive', 'self'}}`` (each a list of
        [function, percent of samples]), or ``{name: {'error': ...}}``."""
        results = {}
        for name, out, proc in self._procs:
            proc.send_signal(signal.SIGINT)
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            if out.exists():
                results[name] = top_functions(out.read_text(), top)
            else:
                results[name] = {'error': (err or '').strip()[-300:]}
        return results


def _function(frame):
    """``name (file)`` of a py-spy frame ``name (file:line)``."""
    return _LINE.sub(')', frame.strip())


#: Leaf functions that wait (a lock, a socket, a sleep): py-spy may still
#: see such a thread as active; their samples are counted apart.
WAITS = ('Condition.wait', 'Event.wait', '.select (', 'readinto (',
         'recv (', '_read (', 'sleep (', '_read_from_socket (',
         'wait (', 'accept (', 'poll (')
#: What a sample's stack is attributed to, by the file of its frames:
#: every library whose frames are on the stack gets the sample.
LIBRARIES = [
    ('SQLAlchemy', 'sqlalchemy/'), ('psycopg2 / PyMySQL / sqlite3',
                                    ('psycopg2/', 'pymysql/', 'sqlite3/')),
    ('openstacksdk', 'openstack/'), ('keystoneauth1', 'keystoneauth1/'),
    ('requests / urllib3 / http.client', ('requests/', 'urllib3/',
                                          'http/client')),
    ('oslo.messaging / kombu / amqp', ('oslo_messaging/', 'kombu/',
                                       'amqp/')),
    ('tooz / redis / kazoo', ('tooz/', 'redis/', 'kazoo/')),
    ('json', ('json/', 'jsonschema/')),
    ('Flask / Werkzeug / cheroot', ('flask/', 'werkzeug/', 'cheroot/')),
    ('logging / oslo.log', ('logging/', 'oslo_log/')),
    ('oslo.config', 'oslo_config/'), ('automaton', 'automaton/'),
    ('prometheus_client', 'prometheus_client/'),
    ('inspector_ha (any)', 'inspector_ha/'),
]


def _waiting(leaf):
    return any(w in leaf for w in WAITS)


def _stacks(raw):
    """(frames, weight) of each line of py-spy's raw (collapsed) stacks."""
    for line in raw.splitlines():
        stack, _, count = line.rpartition(' ')
        if stack and count.isdigit():
            yield [_function(f) for f in stack.split(';')], int(count)


def top_functions(raw, top=12):
    """Rank py-spy's raw (collapsed) stacks, waits left out: the share of
    the working samples of each library on the stack, of each
    inspector_ha function (inclusive), and of each leaf function
    (self)."""
    libraries, own, leaves = (collections.Counter() for _ in range(3))
    working = waiting = 0
    for frames, weight in _stacks(raw):
        if _waiting(frames[-1]):
            waiting += weight
            continue
        working += weight
        leaves[frames[-1]] += weight
        for function in set(f for f in frames if 'inspector_ha/' in f):
            own[function] += weight
        for name, marks in LIBRARIES:
            if any(m in f for f in frames for m in (
                    (marks,) if isinstance(marks, str) else marks)):
                libraries[name] += weight

    def ranked(counter, count=top):
        return [[f, round(100.0 * n / working, 1)]
                for f, n in counter.most_common(count)]
    if not working:
        return {'samples': waiting, 'working': 0, 'libraries': [],
                'inclusive': [], 'self': []}
    return {'samples': working + waiting, 'working': working,
            'libraries': ranked(libraries, len(LIBRARIES)),
            'inclusive': ranked(own), 'self': ranked(leaves)}


def status_read_cost(api_url, uuids, api_pids, reads=500):
    """CPU ms of the API processes ``api_pids`` per ``GET
    /v1/introspection/<uuid>``, over ``reads`` reads of ``uuids`` one at
    a time, less their idle CPU over the same time."""
    uuids = list(uuids)
    session = requests.Session()

    def cpu():
        return sum(measure.cpu_seconds(p) for pid in api_pids
                   for p in measure.tree(pid))
    idle_began, idle_cpu = time.monotonic(), cpu()
    time.sleep(2)
    idle_rate = (cpu() - idle_cpu) / (time.monotonic() - idle_began)
    began, before = time.monotonic(), cpu()
    for i in range(reads):
        session.get('%s/v1/introspection/%s' % (api_url,
                                                uuids[i % len(uuids)]),
                    timeout=30).raise_for_status()
    spent = cpu() - before - idle_rate * (time.monotonic() - began)
    return round(spent / reads * 1000, 2)


def profiled_pids(named_pids, roles):
    """One process of each role: ``[(name, pid)]``."""
    by_pid = {pid: name for name, pid in named_pids}
    return [(by_pid.get(pids[0], role).replace(' ', '_'), pids[0])
            for role, pids in roles.items() if pids]


def can_sample():
    """Whether py-spy is here and may attach to this user's processes."""
    if _py_spy() is None:
        return False
    if os.geteuid() == 0:
        return True
    try:
        return pathlib.Path('/proc/sys/kernel/yama/ptrace_scope'
                            ).read_text().strip() == '0'
    except OSError:
        return True
