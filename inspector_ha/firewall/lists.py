"""The black-list and white-list one process keeps, and their changes.

Both are keyed so that pub-sub removals can name what they remove: the
black-list by Ironic port id, the white-list by node UUID. Every change
sets :attr:`Lists.changed`, which wakes the firewall thread; a change of
the black-list also sets :attr:`Lists.urgent`, which the leader applies
without waiting for more white-list changes to gather. MACs are kept in
lower case (a :class:`~inspector_ha.firewall.base.State`'s are).

A list's set of MACs is built once per change of it: a state read while
that list is unchanged holds the same frozenset object, so comparing it
with the applied state, and diffing the two, take no time for that list
whatever its size (at a site of 20,000 ports, every member rebuilt and
compared the black-list on every white-list change).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from inspector_ha.firewall import base


class Lists:
    """The lists; ``deny_unknown`` is ``[pxe_filter] deny_unknown_macs``."""

    def __init__(self, deny_unknown: bool) -> None:
        self._lock = threading.Lock()
        self._black: dict[str, str] = {}
        self._white: dict[str, frozenset[str]] = {}
        # NOTE: every writer of _black or _white resets its set of MACs
        # (None: to be built by the next state()).
        self._black_macs: frozenset[str] | None = None
        self._white_macs: frozenset[str] | None = None
        self.deny_unknown = deny_unknown
        self.changed = threading.Event()
        #: Set with :attr:`changed` by a black-list change (and by a
        #: reset): to be applied without gathering more changes.
        self.urgent = threading.Event()
        self.black_built = threading.Event()
        #: When (``time.monotonic()``) a whole black-list last came
        #: announced by the elected lister; None before the first.
        self.announced_at: float | None = None

    def replace_black(self, ports: Mapping[str, str],
                      announced: bool = False) -> None:
        """The whole black-list: ``{port_id: mac}`` from Ironic, listed
        here or ``announced`` by the elected lister."""
        black = {port_id: str(mac).lower() for port_id, mac in ports.items()}
        with self._lock:
            changed = black != self._black
            if changed:
                self._black, self._black_macs = black, None
            if announced:
                self.announced_at = time.monotonic()
        self.black_built.set()
        self._mark(changed, urgent=True)

    def announced_within(self, seconds: float) -> bool:
        """Whether an announced black-list came in the last
        ``seconds``."""
        at = self.announced_at
        return at is not None and time.monotonic() - at < seconds

    def black(self, op: str, port_id: str, mac: str) -> None:
        with self._lock:
            before = self._black.get(port_id)
            if op == 'add':
                self._black[port_id] = mac.lower()
            else:
                self._black.pop(port_id, None)
            changed = before != self._black.get(port_id)
            if changed:
                self._black_macs = None
        self._mark(changed, urgent=True)

    def replace_white(self, nodes: Mapping[str, Iterable[str]]) -> None:
        """The whole white-list: ``{node_uuid: {mac, ...}}`` from SQL."""
        white = {u: frozenset(str(m).lower() for m in macs)
                 for u, macs in nodes.items()}
        with self._lock:
            changed = white != self._white
            if changed:
                self._white, self._white_macs = white, None
        self._mark(changed)

    def white(self, op: str, node_uuid: str, macs: Iterable[str]) -> None:
        with self._lock:
            before = self._white.get(node_uuid)
            if op == 'add':
                self._white[node_uuid] = frozenset(m.lower() for m in macs)
            else:
                self._white.pop(node_uuid, None)
            changed = before != self._white.get(node_uuid)
            if changed:
                self._white_macs = None
        self._mark(changed)

    def clear_white(self) -> None:
        self.replace_white({})

    def state(self, open_for: float | None) -> base.State:
        """The :class:`base.State` for these lists (no white-list when
        closed: only the leader keeps one)."""
        white = base.CLOSED.whitelist
        with self._lock:
            if self._black_macs is None:
                self._black_macs = frozenset(self._black.values())
            if open_for is not None:
                if self._white_macs is None:
                    self._white_macs = frozenset().union(
                        *self._white.values())
                white = self._white_macs
            black = self._black_macs
        return base.State(open_for, white, black, self.deny_unknown)

    def _mark(self, changed: bool, urgent: bool = False) -> None:
        if changed:
            if urgent:
                self.urgent.set()
            self.changed.set()
