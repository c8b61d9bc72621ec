"""The PXE filter driver API: one ``State`` in, packets filtered.

Packet semantics when open: a white-listed MAC is allowed; else a
black-listed MAC is dropped; else the packet is allowed, or dropped with
``deny_unknown``.  When closed, every DHCP packet to the host is dropped.
A driver is one module and an entry point of :data:`NAMESPACE` (in any
installed package); it declares the option group it reads (``group``,
``opts``), registered when it is loaded.  What every driver reads is in
``[pxe_filter]``.
"""

from __future__ import annotations

import abc
import logging
import threading
import typing
from collections.abc import Iterable
from typing import Any

from stevedore import driver as stevedore_driver

from inspector_ha.common import addresses
from inspector_ha.conf import plugins
from inspector_ha.firewall import runner as runner_mod

LOG = logging.getLogger(__name__)
NAMESPACE = 'inspector_ha.pxe_filter'
FirewallError = runner_mod.FirewallError


class State(typing.NamedTuple):
    """What the filter should let through.

    ``open_for``: None when closed (not the leader, or reset); else this
    host leads and its pass rule is on, expiring after ``open_for``
    seconds without :meth:`Driver.renew` where the driver is ``leased``.
    The MACs of both lists are lower case (:func:`mac_changes` relies on
    it); invalid ones are left out by the drivers (:func:`clean_macs`).
    """
    open_for: float | None
    whitelist: frozenset[str]
    blacklist: frozenset[str]
    deny_unknown: bool

    @property
    def is_open(self) -> bool:
        return self.open_for is not None


CLOSED = State(None, frozenset(), frozenset(), False)


def clean_macs(macs: Iterable[object]) -> list[str]:
    """Sorted lower-case MACs; anything else is logged and left out (it
    would otherwise end up in a firewall script)."""
    lowered = {str(mac).lower() for mac in macs}
    bad = sorted(mac for mac in lowered if not addresses.MAC.match(mac))
    if bad:
        LOG.warning('Not filtering invalid MAC addresses: %s', bad)
    return sorted(lowered.difference(bad))


def mac_changes(old: frozenset[str],
                new: frozenset[str]) -> tuple[list[str], list[str]]:
    """The clean MACs added (in ``new``, not ``old``) and removed.

    Only the differences are cleaned: a :class:`State`'s MACs are lower
    case already (:class:`~inspector_ha.firewall.lists.Lists` keeps them
    so), and at a site of 20,000 ports cleaning both black-lists whole on
    every white-list change took 42% of the firewall leader's CPU.
    """
    if old is new:
        return [], []
    added, removed = clean_macs(new - old), clean_macs(old - new)
    # NOTE: a MAC on both sides differed in case only: it stays.
    both = set(added).intersection(removed)
    if both:
        added = [mac for mac in added if mac not in both]
        removed = [mac for mac in removed if mac not in both]
    return added, removed


def dhcp_ports(conf: Any) -> tuple[int, ...]:
    """UDP ports of the PXE DHCP service for ``[pxe_filter]
    ip_version``."""
    return (67, 547) if conf.pxe_filter.ip_version == '6' else (67,)


class Driver(abc.ABC):
    """A PXE filter on one host; the caller serializes calls."""

    leased = False
    """True when the pass rule expires by itself (kernel-enforced)."""

    group: str | None = None
    """The option group the driver owns, or None."""

    opts: tuple[Any, ...] | list[Any] = ()
    """The options of ``group``."""

    @classmethod
    def list_opts(cls) -> list[tuple[str, list[Any]]]:
        """``[(group, [opts])]`` the driver reads besides ``[pxe_filter]``
        (for the sample configuration, and registered at start-up)."""
        return [(cls.group, list(cls.opts))] if cls.group else []

    def __init__(self, conf: Any, runner: runner_mod.Runner) -> None:
        for group, opts in self.list_opts():
            conf.register_opts(opts, group=group)
        self.conf = conf
        self.runner = runner
        self.interface = conf.pxe_filter.dnsmasq_interface
        self.applied: State | None = None

    @property
    def name(self) -> str:
        return type(self).__module__.rsplit('.', 1)[-1]

    @abc.abstractmethod
    def init(self) -> None:
        """Remove leftovers of an earlier run, create the structures, PXE
        blocked."""

    @abc.abstractmethod
    def apply(self, state: State) -> None:
        """Make the filter match ``state``, atomically where possible."""

    def renew(self, open_for: float) -> None:
        """Re-arm the pass rule's lease (no-op without leases)."""

    @abc.abstractmethod
    def block(self) -> None:
        """Close PXE completely, fast, whatever state the host is in."""

    def _apply_changes(self, last: State, state: State) -> None:
        """Turn ``last`` into ``state`` by changes only (no rebuild); a
        driver that calls :meth:`_diff_applied` provides it."""
        raise NotImplementedError

    def _diff_applied(self, last: State | None, state: State) -> bool:
        """Apply ``state`` as changes to ``last``; False if it cannot
        (nothing applied yet, ``deny_unknown`` changed, or the changes
        failed): the caller then rebuilds."""
        if last is None or last.deny_unknown != state.deny_unknown:
            return False
        try:
            self._apply_changes(last, state)
        except FirewallError as exc:
            LOG.warning('%s: rebuilding the filter: %s', self.name, exc)
            return False
        return True

    def describe(self) -> dict[str, Any]:
        """A small JSON-able dict of the filter state (from memory)."""
        state = self.applied
        return {'driver': self.name,
                'open': bool(state and state.is_open),
                'whitelist': len(state.whitelist) if state else 0,
                'blacklist': len(state.blacklist) if state else 0,
                'deny_unknown': bool(state and state.deny_unknown)}


def load(conf: Any, stop: threading.Event | None = None) -> Driver:
    """The driver named by ``[pxe_filter] driver``, with its Runner."""
    opts = conf.pxe_filter
    if opts.deny_unknown_macs and conf.processing.node_not_found_hook:
        raise ValueError('[pxe_filter] deny_unknown_macs and [processing] '
                         'node_not_found_hook exclude each other')
    try:
        plugins.check(conf, 'pxe_filter', 'driver')
    except ValueError as exc:
        raise ValueError('[pxe_filter] driver: %s' % exc) from None
    runner = runner_mod.Runner(opts.command_prefix, opts.command_timeout,
                               stop)
    manager: Any = stevedore_driver.DriverManager(
        NAMESPACE, opts.driver, invoke_on_load=True,
        invoke_args=(conf, runner))
    return manager.driver
