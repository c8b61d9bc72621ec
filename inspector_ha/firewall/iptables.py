"""iptables: the HA spec's white-list and black-list chains.

INPUT jumps DHCP on the PXE interface to ``<chain>-white`` (one ACCEPT per
white-listed MAC, on the leader only), which falls through to
``<chain>-black`` (one DROP per black-listed MAC, then the pass rule:
ACCEPT on the leader, DROP with deny_unknown or on other hosts).  Each
change is one ``iptables-restore --noflush`` call, which the kernel
commits as one transaction.  ipset is not used: this kernel has no
``hash:mac``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from oslo_config import cfg

from inspector_ha.firewall import base
from inspector_ha.firewall import runner as runner_mod

_MAX_CHAIN = 28

GROUP = 'iptables'
OPTS = [
    cfg.StrOpt('firewall_chain', default='ironic-inspector',
               help='Prefix of the iptables chains (<prefix>-white, '
                    '<prefix>-black).'),
]


def _mac_rule(verb: str, chain: str, mac: str, target: str) -> str:
    where = ' 1' if verb == '-I' else ''
    return '%s %s%s -m mac --mac-source %s -j %s' % (verb, chain, where,
                                                     mac, target)


def _effective_white(state: base.State) -> list[str]:
    return base.clean_macs(state.whitelist) if state.is_open else []


def _final(state: base.State) -> str:
    return 'ACCEPT' if state.is_open and not state.deny_unknown else 'DROP'


class IptablesDriver(base.Driver):
    """PXE filter in the chains ``[iptables] firewall_chain``-white/-black.
    """

    group, opts = GROUP, OPTS

    def __init__(self, conf: Any, runner: runner_mod.Runner) -> None:
        super().__init__(conf, runner)
        prefix = conf.iptables.firewall_chain
        self.white, self.black = prefix + '-white', prefix + '-black'
        if len(self.black) > _MAX_CHAIN:
            raise ValueError('[iptables] firewall_chain %r is too long: '
                             'at most %d characters'
                             % (prefix, _MAX_CHAIN - len('-white')))
        six = conf.pxe_filter.ip_version == '6'
        self.iptables = 'ip6tables' if six else 'iptables'
        self.port = base.dhcp_ports(conf)[-1]

    def init(self) -> None:
        self.applied = None
        self._delete_jumps()
        self.apply(base.CLOSED)

    def apply(self, state: base.State) -> None:
        last, self.applied = self.applied, None
        if not self._diff_applied(last, state):
            jump = not self._jump_exists()
            self._restore(self.rebuild_script(state, jump))
        self.applied = state

    def block(self) -> None:
        self.applied = None
        jump = not self._jump_exists(urgent=True)
        self._restore(self.blocked_script(jump), urgent=True)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info['chains'] = [self.white, self.black]
        return info

    # scripts

    def rebuild_script(self, state: base.State, jump: bool = False) -> str:
        """Both chains for ``state`` (and the INPUT jump if ``jump``)."""
        lines = [_mac_rule('-A', self.white, mac, 'ACCEPT')
                 for mac in _effective_white(state)]
        lines.append('-A %s -j %s' % (self.white, self.black))
        lines += [_mac_rule('-A', self.black, mac, 'DROP')
                  for mac in base.clean_macs(state.blacklist)]
        lines.append('-A %s -j %s' % (self.black, _final(state)))
        return self._script(lines, declare=True, jump=jump)

    def changes_script(self, last: base.State, state: base.State) -> str:
        """Rule deletions and insertions turning ``last`` into ``state``."""
        lines = self._changes(self.white, 'ACCEPT', _effective_white(last),
                              _effective_white(state))
        lines += self._changes(self.black, 'DROP', last.blacklist,
                               state.blacklist)
        # Always replaced: the transaction fails (and the caller rebuilds)
        # if the jump or the chains went missing behind our back.
        jump = ' '.join(self._jump_spec())
        lines += ['-D %s -j %s' % (self.black, _final(last)),
                  '-A %s -j %s' % (self.black, _final(state)),
                  '-D INPUT %s' % jump, '-I INPUT 1 %s' % jump]
        return self._script(lines)

    def blocked_script(self, jump: bool = False) -> str:
        """Both chains reduced to DROP."""
        lines = ['-A %s -j DROP' % self.white, '-A %s -j DROP' % self.black]
        return self._script(lines, declare=True, jump=jump)

    def _changes(self, chain: str, target: str, old: Iterable[str],
                 new: Iterable[str]) -> list[str]:
        added, removed = base.mac_changes(frozenset(old), frozenset(new))
        return ([_mac_rule('-D', chain, mac, target) for mac in removed] +
                [_mac_rule('-I', chain, mac, target) for mac in added])

    def _script(self, lines: list[str], declare: bool = False,
                jump: bool = False) -> str:
        head = ['*filter']
        if declare:  # declaring a chain creates it, or flushes it
            head += [':%s - [0:0]' % self.white, ':%s - [0:0]' % self.black]
        if jump:
            head.append('-I INPUT 1 %s' % ' '.join(self._jump_spec()))
        return '\n'.join(head + lines + ['COMMIT', ''])

    # commands

    def _jump_spec(self) -> list[str]:
        return ['-i', self.interface, '-p', 'udp', '--dport', str(self.port),
                '-j', self.white]

    def _jump_exists(self, urgent: bool = False) -> bool:
        try:
            self._iptables(['-C', 'INPUT'] + self._jump_spec(), urgent)
        except base.FirewallError:
            return False
        return True

    def _delete_jumps(self) -> None:
        while self._jump_exists():
            self._iptables(['-D', 'INPUT'] + self._jump_spec())

    def _apply_changes(self, last: base.State, state: base.State) -> None:
        self._restore(self.changes_script(last, state))

    def _iptables(self, args: list[str], urgent: bool = False) -> None:
        self.runner.run([self.iptables, '-w'] + args, urgent=urgent)

    def _restore(self, script: str, urgent: bool = False) -> None:
        self.runner.run([self.iptables + '-restore', '-w', '--noflush'],
                        stdin=script, urgent=urgent)
