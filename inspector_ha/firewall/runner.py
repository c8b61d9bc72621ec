"""Run firewall commands: a prefix (sudo, ip netns exec), a time limit,
and one clear error."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterable, Sequence

_SLICE = 0.1


class FirewallError(RuntimeError):
    """A firewall command failed (``rc`` None: timed out or interrupted)."""

    def __init__(self, cmd: Iterable[object], rc: int | None,
                 stderr: str) -> None:
        self.cmd, self.rc, self.stderr = list(cmd), rc, stderr
        super().__init__('%s failed (rc=%s): %s'
                         % (' '.join(map(str, cmd)), rc, stderr.strip()))


class Runner:
    """Runs argv lists behind ``prefix``, each for at most ``timeout`` s.

    ``stop`` (a ``threading.Event`` or None) interrupts a running command,
    except an ``urgent`` one: blocking PXE must go through while stopping.
    """

    def __init__(self, prefix: Iterable[str] | None, timeout: float,
                 stop: threading.Event | None = None) -> None:
        self.prefix = list(prefix or ())
        self.timeout = timeout
        self.stop = stop

    def run(self, argv: Sequence[object], stdin: str | None = None,
            urgent: bool = False) -> str:
        """Run ``argv`` (feeding ``stdin`` text); return its stdout."""
        cmd = self.prefix + [str(a) for a in argv]
        proc = subprocess.Popen(
            cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE)
        try:
            out, err = self._communicate(cmd, proc, stdin, urgent)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if proc.returncode:
            raise FirewallError(cmd, proc.returncode, err)
        return out

    def shell(self, command: str, urgent: bool = False) -> None:
        """Run a shell command line (no-op when empty)."""
        if command:
            self.run(['sh', '-c', command], urgent=urgent)

    def _communicate(self, cmd: list[str], proc: subprocess.Popen[str],
                     stdin: str | None, urgent: bool) -> tuple[str, str]:
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return proc.communicate(stdin, timeout=_SLICE)
            except subprocess.TimeoutExpired:
                stdin = None  # already queued; communicate() resumes it
            if time.monotonic() >= deadline:
                raise FirewallError(cmd, None,
                                    'timed out after %s s' % self.timeout)
            if not urgent and self.stop is not None and self.stop.is_set():
                raise FirewallError(cmd, None, 'interrupted: stopping')
