"""dnsmasq: one ``--dhcp-hostsdir`` file per MAC, and a wildcard file.

``aa:bb:cc:dd:ee:ff,ignore`` denies a MAC, ``aa:bb:cc:dd:ee:ff`` allows it
(a per-MAC allow beats the wildcard's ignore, and the reverse), and
``unknown_hosts_filter`` holds the policy for every other MAC.  dnsmasq
reads new and renamed files through inotify but forgets deleted ones only
on SIGHUP, so files are never deleted while it runs: a MAC that left both
lists gets the unknown-host policy.  Each file is written to a dot-file
(which dnsmasq ignores) and renamed; denials are written before
permissions, so no intermediate state allows a MAC both states deny.
"""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from oslo_config import cfg

from inspector_ha.common import addresses
from inspector_ha.firewall import base
from inspector_ha.firewall import runner as runner_mod

GROUP = 'dnsmasq_pxe_filter'
OPTS = [
    cfg.StrOpt('dhcp_hostsdir',
               default='/var/lib/inspector-ha/dhcp-hostsdir',
               help='dnsmasq --dhcp-hostsdir the driver writes one file '
                    'per MAC into.'),
    cfg.BoolOpt('purge_dhcp_hostsdir', default=True,
                help='Delete the files of an earlier run at start; set '
                     'False when several processes share the directory.'),
    cfg.StrOpt('dnsmasq_start_command', default='',
               help='Shell command run after the filter is set up, e.g. '
                    'to start dnsmasq; empty: none.'),
    cfg.StrOpt('dnsmasq_stop_command', default='',
               help='Shell command run when the filter is blocked, e.g. '
                    'to stop dnsmasq; empty: none.'),
]

WILDCARD = 'unknown_hosts_filter'
ALLOW, IGNORE = 'allow', 'ignore'
_TEMP = re.compile(r'^\..*\.tmp$')


def content(name: str, policy: str) -> str:
    """The text of the file ``name`` for ``policy``."""
    host = '*:*:*:*:*:*' if name == WILDCARD else name
    return host + (',ignore\n' if policy == IGNORE else '\n')


def policies(state: base.State, known: Iterable[str]) -> dict[str, str]:
    """The policy of every file for ``state``; ``known``: the MACs that
    already have a file.  Closed, every list MAC gets a denying file too,
    so that opening later writes only the white-list and the wildcard."""
    macs = {*known, *base.clean_macs(state.whitelist),
            *base.clean_macs(state.blacklist)}
    result = {mac: _policy(state, mac) for mac in macs}
    result[WILDCARD] = _unknown_policy(state)
    return result


def changed_policies(last: base.State,
                     state: base.State) -> dict[str, str] | None:
    """The policies for ``state`` of the MACs that entered or left either
    list since ``last``: the only files whose policy can differ, as long
    as PXE stays open (or closed) with the same ``deny_unknown``; None
    when that changed (every file and the wildcard then do)."""
    if (last.is_open, last.deny_unknown) != (state.is_open,
                                             state.deny_unknown):
        return None
    touched: set[str] = set()
    for name in ('whitelist', 'blacklist'):
        added, removed = base.mac_changes(getattr(last, name),
                                          getattr(state, name))
        touched.update(added, removed)
    return {mac: _policy(state, mac) for mac in touched}


def _policy(state: base.State, mac: str) -> str:
    """The policy of one clean, lower-case ``mac`` for ``state`` (a
    state's MACs are lower case: :class:`~inspector_ha.firewall.base.
    State`): a white-listed MAC is allowed while open, a black-listed one
    ignored, any other gets the unknown-host policy."""
    if state.is_open and mac in state.whitelist:
        return ALLOW
    if mac in state.blacklist:
        return IGNORE
    return _unknown_policy(state)


def _unknown_policy(state: base.State) -> str:
    """The policy of a MAC in neither list, and of the wildcard."""
    return ALLOW if state.is_open and not state.deny_unknown else IGNORE


def changes(written: Mapping[str, str | None],
            wanted: Mapping[str, str]) -> list[tuple[str, str]]:
    """The files to write, ``[(name, policy)]``: denials first (the
    wildcard first among them), then permissions."""
    todo = [(n, p) for n, p in wanted.items() if written.get(n) != p]
    return sorted(todo, key=lambda item: (item[1] != IGNORE,
                                          item[0] != WILDCARD, item[0]))


def _write(dir_fd: int, name: str, text: str) -> None:
    """Write ``name`` as a whole: a dot-file (which dnsmasq ignores),
    renamed over it (dnsmasq reads it on IN_MOVED_TO)."""
    tmp = '.%s.tmp' % name
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644,
                 dir_fd=dir_fd)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


class DnsmasqDriver(base.Driver):
    """PXE filter through ``[dnsmasq_pxe_filter] dhcp_hostsdir``."""

    group, opts = GROUP, OPTS

    def __init__(self, conf: Any, runner: runner_mod.Runner) -> None:
        super().__init__(conf, runner)
        opts = conf.dnsmasq_pxe_filter
        self.hostsdir = pathlib.Path(opts.dhcp_hostsdir)
        self.purge = opts.purge_dhcp_hostsdir
        self.start_command = opts.dnsmasq_start_command
        self.stop_command = opts.dnsmasq_stop_command
        self.written: dict[str, str | None] = {}
        self.started = False

    def init(self) -> None:
        self.applied = None
        self.hostsdir.mkdir(parents=True, exist_ok=True)
        for path in self._files(_TEMP):
            path.unlink()
        self.written = self.read()
        if self.purge:
            self._purge()
        self.apply(base.CLOSED)

    def apply(self, state: base.State) -> None:
        """Write the files whose policy changed: those of the MACs that
        entered or left a list since the applied state, or every file
        when there is none or PXE opened, closed or changed
        ``deny_unknown`` (at 20,000 ports, recomputing every file took
        tens of milliseconds per white-list change)."""
        last, self.applied = self.applied, None
        wanted = changed_policies(last, state) if last is not None else None
        if wanted is None:
            wanted = policies(state, [n for n in self.written
                                      if n != WILDCARD])
        self._write_all(changes(self.written, wanted))
        self.applied = state
        if not self.started:
            self.runner.shell(self.start_command)
            self.started = True

    def block(self) -> None:
        self.applied = None
        self.hostsdir.mkdir(parents=True, exist_ok=True)
        for path in self._files():  # unknown content: rewrite it
            self.written.setdefault(path.name, None)
        wanted = dict.fromkeys(self.written, IGNORE)
        wanted[WILDCARD] = IGNORE
        self._write_all(changes(self.written, wanted))
        self.started = False
        self.runner.shell(self.stop_command, urgent=True)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(hostsdir=str(self.hostsdir), files=len(self.written),
                    unknown_hosts=self.written.get(WILDCARD))
        return info

    def read(self) -> dict[str, str | None]:
        """``{name: policy}`` of the files in the directory."""
        found: dict[str, str | None] = {}
        for path in self._files():
            text = path.read_text(errors='replace').strip()
            found[path.name] = IGNORE if text.endswith(',ignore') else ALLOW
        return found

    def _files(self, pattern: re.Pattern[str] | None = None
               ) -> list[pathlib.Path]:
        """Our files in the directory (or those matching ``pattern``)."""
        if not self.hostsdir.is_dir():
            return []
        return [p for p in self.hostsdir.iterdir()
                if (pattern.match(p.name) if pattern else
                    p.name == WILDCARD or addresses.MAC.match(p.name))]

    def _purge(self) -> None:
        """Deny, then delete, the files of an earlier run: dnsmasq keeps
        the last record of a deleted file until SIGHUP."""
        self._write_all(changes(self.written,
                                dict.fromkeys(self.written, IGNORE)))
        for path in self._files():
            path.unlink()
        self.written = {}

    def _write_all(self, todo: list[tuple[str, str]]) -> None:
        if not todo:
            return
        dir_fd = os.open(self.hostsdir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for name, policy in todo:
                _write(dir_fd, name, content(name, policy))
                self.written[name] = policy
        finally:
            os.close(dir_fd)
