"""nftables: one ``inet`` table, MAC sets, and a kernel-enforced lease.

The pass rule is an element of the ``pass`` set (the DHCP ports) whose
timeout is the lease: when the leader stops renewing it, the kernel
closes PXE by itself.  Every change is one ``nft -f -`` transaction: a
full rebuild (create, delete, define the table) or, when only the lists
or the lease changed, element additions and deletions.
"""

import re
import time

from inspector_ha.firewall import base

_EXPIRES = re.compile(r'expires ((?:\d+[dhms]+)+)')
_UNITS = {'d': 86400, 'h': 3600, 'm': 60, 's': 1, 'ms': 0.001}


def _elements(values):
    return ', '.join(str(v) for v in values)


def _set(name, kind, values, flags=''):
    body = 'type %s;%s' % (kind, flags)
    if values:
        body += ' elements = { %s };' % _elements(values)
    return '  set %s { %s }\n' % (name, body)


def _lease(ports, open_for):
    ms = max(1, round(open_for * 1000))
    return ['%s timeout %dms' % (port, ms) for port in ports]


def _seconds(duration):
    """``1s480ms`` -> 1.48."""
    parts = re.findall(r'(\d+)(ms|[dhms])', duration)
    return sum(int(n) * _UNITS[unit] for n, unit in parts)


class NftablesDriver(base.Driver):
    """PXE filter in the nftables table ``[nftables] table``."""

    leased = True

    def __init__(self, conf, runner):
        super().__init__(conf, runner)
        self.table = conf.nftables.table
        self.ports = base.dhcp_ports(conf)
        self.armed_at = None

    def init(self):
        self.apply(base.CLOSED)

    def apply(self, state):
        last, self.applied = self.applied, None
        if not self._diff_applied(last, state):
            self._nft(self.rebuild_script(state))
        self._applied(state)

    def renew(self, open_for):
        if self.applied is None or not self.applied.is_open:
            return
        self._nft(self.lease_script(open_for))
        self._applied(self.applied._replace(open_for=open_for))

    def block(self):
        self.applied = None
        self._nft(self.blocked_script(), urgent=True)

    def describe(self):
        info = super().describe()
        info['table'] = self.table
        if self.applied is not None and self.applied.is_open:
            left = self.applied.open_for - (time.monotonic() - self.armed_at)
            info['lease_remaining'] = round(max(0.0, left), 3)
        return info

    def lease_remaining(self):
        """Seconds the kernel keeps the pass rule on (0.0: closed)."""
        out = self.runner.run(['nft', 'list', 'set', 'inet', self.table,
                               'pass'])
        found = _EXPIRES.findall(out)
        return max((_seconds(d) for d in found), default=0.0)

    # scripts

    def rebuild_script(self, state):
        """The whole table for ``state``, replacing any earlier one."""
        t = 'inet %s' % self.table
        lease = _lease(self.ports, state.open_for) if state.is_open else []
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

    def changes_script(self, last, state):
        """Element changes from ``last`` to ``state``, and the lease."""
        lines = []
        for name in ('white', 'black'):
            old = set(base.clean_macs(getattr(last, name + 'list')))
            new = set(base.clean_macs(getattr(state, name + 'list')))
            lines += self._elements('add', name, sorted(new - old))
            lines += self._elements('delete', name, sorted(old - new))
        return ''.join(lines) + self.lease_script(state.open_for)

    def lease_script(self, open_for):
        """Flush the ``pass`` set, and re-arm it unless ``open_for`` is
        None: one transaction, so no packet sees it empty in between."""
        lines = ['flush set inet %s pass\n' % self.table]
        if open_for is not None:
            lines += self._elements('add', 'pass',
                                    _lease(self.ports, open_for))
        return ''.join(lines)

    def blocked_script(self):
        """A table dropping all DHCP on the interface, nothing else."""
        t = 'inet %s' % self.table
        return ('table %s\ndelete table %s\ntable %s {\n%s}\n'
                % (t, t, t, self._input_chain('drop')))

    def _input_chain(self, verdict):
        ports = _elements(self.ports)
        return ('  chain input {\n'
                '    type filter hook input priority filter; '
                'policy accept;\n'
                '    iifname "%s" udp dport { %s } %s\n  }\n'
                % (self.interface, ports, verdict))

    def _elements(self, verb, name, values):
        if not values:
            return []
        return ['%s element inet %s %s { %s }\n'
                % (verb, self.table, name, _elements(values))]

    def _apply_changes(self, last, state):
        self._nft(self.changes_script(last, state))

    def _applied(self, state):
        self.applied = state
        self.armed_at = time.monotonic()

    def _nft(self, script, urgent=False):
        self.runner.run(['nft', '-f', '-'], stdin=script, urgent=urgent)
