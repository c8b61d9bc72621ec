"""nftables: one ``inet`` table, MAC sets, and a kernel-enforced lease.

The pass rule is an element of the ``pass`` set (the DHCP ports) whose
timeout is the lease: when the leader stops renewing it, the kernel
closes PXE by itself.  Every change is one ``nft -f -`` transaction: a
full rebuild (create, delete, define the table) or, when only the lists
or the lease changed, element additions and deletions.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from typing import Any

from oslo_config import cfg

from inspector_ha.firewall import base
from inspector_ha.firewall import runner as runner_mod

GROUP = 'nftables'
OPTS = [
    cfg.StrOpt('table', default='inspector_ha',
               help='Name of the inet table the driver owns (it deletes '
                    'and rebuilds it).'),
]

_EXPIRES = re.compile(r'expires ((?:\d+[dhms]+)+)')
_UNITS = {'d': 86400, 'h': 3600, 'm': 60, 's': 1, 'ms': 0.001}


def _elements(values: Iterable[object]) -> str:
    return ', '.join(str(v) for v in values)


def _set(name: str, kind: str, values: Sequence[object],
         flags: str = '') -> str:
    body = 'type %s;%s' % (kind, flags)
    if values:
        body += ' elements = { %s };' % _elements(values)
    return '  set %s { %s }\n' % (name, body)


def _lease(ports: Iterable[int], open_for: float) -> list[str]:
    ms = max(1, round(open_for * 1000))
    return ['%s timeout %dms' % (port, ms) for port in ports]


def _seconds(duration: str) -> float:
    """``1s480ms`` -> 1.48."""
    parts = re.findall(r'(\d+)(ms|[dhms])', duration)
    return sum(int(n) * _UNITS[unit] for n, unit in parts)


class NftablesDriver(base.Driver):
    """PXE filter in the nftables table ``[nftables] table``."""

    leased = True
    group, opts = GROUP, OPTS

    def __init__(self, conf: Any, runner: runner_mod.Runner) -> None:
        super().__init__(conf, runner)
        self.table = conf.nftables.table
        self.ports = base.dhcp_ports(conf)
        self.armed_at = 0.0

    def init(self) -> None:
        self.apply(base.CLOSED)

    def apply(self, state: base.State) -> None:
        last, self.applied = self.applied, None
        if not self._diff_applied(last, state):
            self._nft(self.rebuild_script(state))
        self._applied(state)

    def renew(self, open_for: float) -> None:
        if self.applied is None or not self.applied.is_open:
            return
        self._nft(self.lease_script(open_for))
        self._applied(self.applied._replace(open_for=open_for))

    def block(self) -> None:
        self.applied = None
        self._nft(self.blocked_script(), urgent=True)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info['table'] = self.table
        open_for = self.applied.open_for if self.applied else None
        if open_for is not None:
            left = open_for - (time.monotonic() - self.armed_at)
            info['lease_remaining'] = round(max(0.0, left), 3)
        return info

    def lease_remaining(self) -> float:
        """Seconds the kernel keeps the pass rule on (0.0: closed)."""
        out = self.runner.run(['nft', 'list', 'set', 'inet', self.table,
                               'pass'])
        found = _EXPIRES.findall(out)
        return max((_seconds(d) for d in found), default=0.0)

    # scripts

    def rebuild_script(self, state: base.State) -> str:
        """The whole table for ``state``, replacing any earlier one."""
        t = 'inet %s' % self.table
        lease = (_lease(self.ports, state.open_for)
                 if state.open_for is not None else [])
        return ''.join([
            'table %s\ndelete table %s\ntable %s {\n' % (t, t, t),
            _set('white', 'ether_addr', base.clean_macs(state.whitelist)),
            _set('black', 'ether_addr', base.clean_macs(state.blacklist)),
            _set('pass', 'inet_service', lease, ' flags timeout;'),
            self._input_chain('jump pxe'),
            '  chain pxe {\n'
            '    udp dport != @pass drop\n'
            '    ether saddr @white accept\n'
            '    ether saddr @black drop\n'
            '    %s\n  }\n}\n' % ('drop' if state.deny_unknown else 'accept')])

    def changes_script(self, last: base.State, state: base.State) -> str:
        """Element changes from ``last`` to ``state``, and the lease."""
        lines: list[str] = []
        for name in ('white', 'black'):
            added, removed = base.mac_changes(getattr(last, name + 'list'),
                                              getattr(state, name + 'list'))
            lines += self._elements('add', name, added)
            lines += self._elements('delete', name, removed)
        return ''.join(lines) + self.lease_script(state.open_for)

    def lease_script(self, open_for: float | None) -> str:
        """Flush the ``pass`` set, and re-arm it unless ``open_for`` is
        None: one transaction, so no packet sees it empty in between."""
        lines = ['flush set inet %s pass\n' % self.table]
        if open_for is not None:
            lines += self._elements('add', 'pass',
                                    _lease(self.ports, open_for))
        return ''.join(lines)

    def blocked_script(self) -> str:
        """A table dropping all DHCP on the interface, nothing else."""
        t = 'inet %s' % self.table
        return ('table %s\ndelete table %s\ntable %s {\n%s}\n'
                % (t, t, t, self._input_chain('drop')))

    def _input_chain(self, verdict: str) -> str:
        ports = _elements(self.ports)
        return ('  chain input {\n'
                '    type filter hook input priority filter; '
                'policy accept;\n'
                '    iifname "%s" udp dport { %s } %s\n  }\n'
                % (self.interface, ports, verdict))

    def _elements(self, verb: str, name: str,
                  values: Sequence[object]) -> list[str]:
        if not values:
            return []
        return ['%s element inet %s %s { %s }\n'
                % (verb, self.table, name, _elements(values))]

    def _apply_changes(self, last: base.State, state: base.State) -> None:
        self._nft(self.changes_script(last, state))

    def _applied(self, state: base.State) -> None:
        self.applied = state
        self.armed_at = time.monotonic()

    def _nft(self, script: str, urgent: bool = False) -> None:
        self.runner.run(['nft', '-f', '-'], stdin=script, urgent=urgent)
