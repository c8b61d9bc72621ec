"""Private server processes for the functional tests: the base of
each (a child in its own process group, with a temp dir and a log) and
ZooKeeper. Ironic is :mod:`ironic_server`'s.

Plain helpers, no pytest in here; an unavailable server raises
:class:`backends.BackendUnavailable`, as the shared services do.
"""

import atexit
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import zipfile

from backends import BackendUnavailable, INSTALL_HINT, free_port, wait_for


def terminate(proc, grace):
    """SIGTERM the process group of ``proc``, SIGKILL it after ``grace`` s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            pass
    kill_group(proc)


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def log_tail(path, lines=30):
    try:
        return ''.join(pathlib.Path(path).read_text(errors='replace')
                       .splitlines(True)[-lines:])
    except OSError:
        return ''


class Server:
    """A child process in its own process group, with a temp dir and log."""

    name = 'server'
    proc = None
    start_timeout = 30  # seconds; each kind of server sets its own

    def __init__(self, port=None):
        self.port = port or free_port()
        self.tmpdir = pathlib.Path(tempfile.mkdtemp(prefix=f'{self.name}-'))
        self.log_path = self.tmpdir / f'{self.name}.log'
        atexit.register(self.close)

    def _spawn(self, argv, **kwargs):
        with open(self.log_path, 'ab') as log:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True, **kwargs)

    def _wait_ready(self, ready, timeout):
        def check():
            if self.proc.poll() is not None:
                raise BackendUnavailable(
                    f'{self.name} exited with {self.proc.returncode}; '
                    f'last log lines ({self.log_path}):\n'
                    f'{log_tail(self.log_path)}')
            return ready()
        try:
            wait_for(check, timeout, message=f'{self.name} not ready after '
                     f'{timeout} s; log: {self.log_path}')
        except TimeoutError as exc:
            self.kill()
            raise BackendUnavailable(str(exc)) from exc

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout=None):
        """Start it and wait until it serves, unless it runs already."""
        if not self.running:
            self._launch(timeout or self.start_timeout)
        return self

    def stop(self, grace=10):
        """Graceful stop (SIGTERM, then SIGKILL after ``grace`` seconds)."""
        if self.proc is not None:
            terminate(self.proc, grace)

    def kill(self):
        """Crash it: SIGKILL the whole process group at once."""
        if self.proc is not None:
            kill_group(self.proc)

    def close(self):
        """Stop it and remove its temp dir (logs included)."""
        self.stop()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        atexit.unregister(self.close)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.close()


def zookeeper_classpath(seed_packages=('zookeeper', 'libzookeeper-java')):
    """zookeeper.jar from Debian's packages plus its manifest Class-Path
    closure (all in /usr/share/java) and a log4j binding for slf4j."""
    try:
        files = subprocess.run(['dpkg', '-L', *seed_packages], check=False,
                               capture_output=True, text=True).stdout.split()
    except FileNotFoundError:
        files = []
    todo = [f for f in files if f.endswith('/zookeeper.jar')]
    todo += ['/usr/share/java/slf4j-log4j12.jar',
             '/usr/share/java/log4j-1.2.jar']
    seen = []
    while todo:
        jar = todo.pop(0)
        if jar in seen or not os.path.exists(jar):
            continue
        seen.append(jar)
        todo.extend(_manifest_class_path(jar))
    if not any(j.endswith('/zookeeper.jar') for j in seen):
        raise BackendUnavailable('ZooKeeper: zookeeper.jar not found; '
                                 f'install Debian package zookeeper '
                                 f'{INSTALL_HINT}')
    return seen


def _manifest_class_path(jar):
    with zipfile.ZipFile(jar) as zf:
        try:
            text = zf.read('META-INF/MANIFEST.MF').decode()
        except KeyError:
            return []
    entries, current = {}, None
    for line in text.splitlines():
        if line.startswith(' ') and current:
            entries[current] += line[1:]
        elif ':' in line:
            current, _, value = line.partition(':')
            entries[current] = value.strip()
    base = os.path.dirname(jar)
    return [os.path.join(base, p)
            for p in entries.get('Class-Path', '').split()]


class ZooKeeper(Server):
    """A private standalone ZooKeeper on a free loopback port.

    ``start()`` may be called again after ``stop()`` or ``kill()``: same port,
    same data.
    """

    name = 'zookeeper'
    LOG4J = ('log4j.rootLogger=INFO, CONSOLE\n'
             'log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n'
             'log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n'
             'log4j.appender.CONSOLE.layout.ConversionPattern='
             '%d{ISO8601} %-5p [%t:%C{1}@%L] %m%n\n')

    @property
    def url(self):
        return f'zookeeper://127.0.0.1:{self.port}'

    def _write_config(self):
        conf = self.tmpdir / 'conf'
        conf.mkdir(exist_ok=True)
        (self.tmpdir / 'data').mkdir(exist_ok=True)
        (conf / 'log4j.properties').write_text(self.LOG4J)
        (conf / 'zoo.cfg').write_text(
            f'tickTime=500\ninitLimit=10\nsyncLimit=5\n'
            f'dataDir={self.tmpdir / "data"}\nclientPort={self.port}\n'
            'clientPortAddress=127.0.0.1\nadmin.enableServer=false\n'
            '4lw.commands.whitelist=ruok,stat,srvr\nmaxClientCnxns=0\n'
            'autopurge.purgeInterval=0\n')
        return conf

    def four_letter(self, word, timeout=1.0):
        with socket.create_connection(('127.0.0.1', self.port), timeout) as s:
            s.sendall(word.encode())
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
        return b''.join(chunks).decode()

    start_timeout = 30

    def _launch(self, timeout):
        java = shutil.which('java')
        if java is None:
            raise BackendUnavailable('ZooKeeper: java not found; install '
                                     f'default-jre-headless {INSTALL_HINT}')
        conf = self._write_config()
        classpath = ':'.join([str(conf), *zookeeper_classpath()])
        self._spawn([java, '-Xmx256m', '-XX:+UseSerialGC',
                     '-XX:TieredStopAtLevel=1',
                     '-Dzookeeper.jmx.log4j.disable=true',
                     '-cp', classpath,
                     'org.apache.zookeeper.server.quorum.QuorumPeerMain',
                     str(conf / 'zoo.cfg')])
        self._wait_ready(lambda: self._ruok(), timeout)

    def _ruok(self):
        # 'imok' comes as soon as the process listens; 'srvr' tells when it
        # actually serves requests (a fraction of a second later).
        try:
            return (self.four_letter('ruok') == 'imok' and
                    self.four_letter('srvr').startswith('Zookeeper version'))
        except OSError:
            return False
