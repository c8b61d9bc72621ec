"""Claims of a node's side effects (a power-on, a power-off), each good
for a window of time: the fence of an Ironic call.

Ironic takes no fencing token, so a worker frozen between its claim and
its call (a paused VM, a kernel hang) would send the call when it wakes,
after another worker took the effect over (``doc/guarantees.md`` D3c).
So a claim is good for ``window`` seconds of this process's monotonic
clock, counted from before its transaction began, and the call checks it
just before it is sent (:meth:`Claim.check`): past the window, it stamps
the claim again (while this delivery's write is the node's latest and no
other delivery stamped the claim since) or refuses. A delivery that
finds the effect claimed by an earlier one stamps the claim as its own,
then waits until the earlier stamp's window has passed, plus
:data:`MARGIN`, before it asks Ironic whether the effect happened.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Callable

import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.common import timeutils
from inspector_ha.db import api as db_api
from inspector_ha.db import ledger
from inspector_ha.db import models

LOG = logging.getLogger(__name__)
#: Seconds a take-over waits beyond the earlier claim's window: the
#: hosts' clocks may differ (NTP keeps them within milliseconds) and
#: Ironic needs a moment to show a power call it accepted.
MARGIN = 1.0


class Lost(Exception):
    """The claim's window passed and another delivery took the effect
    over, or the node moved on: the call must not be made."""


class Claim:
    """A claimed effect, good until ``deadline`` (monotonic seconds)."""

    def __init__(self, claims: Claims, node: models.Node, effect: str,
                 stamp: int, deadline: float) -> None:
        self._claims = claims
        self._node = node
        self._effect = effect
        self._stamp = stamp
        self.deadline = deadline

    def check(self) -> None:
        """Called just before the call is sent (each attempt): return if
        the claim is good, else stamp it again or raise :class:`Lost`."""
        if self._claims.clock() < self.deadline:
            return
        began = self._claims.clock()
        stamp = self._claims.renew(self._node, self._effect, self._stamp)
        if stamp is None:
            raise Lost('%s of node %s was taken over' % (
                self._effect, self._node.uuid))
        self._stamp, self.deadline = stamp, began + self._claims.window


class Claims:
    """Takes claims in ``store``; a claim is good for ``window`` seconds
    (``[coordination] lease_timeout``). A take-over's wait ends early
    when ``stop`` is set (:class:`retry.Interrupted`)."""

    def __init__(self, *, store: db_api.Store, window: float,
                 stop: threading.Event,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], datetime.datetime] = timeutils.utcnow
                 ) -> None:
        self._store = store
        self.window = window
        self._stop = stop
        self.clock = clock
        self._wall = wall

    def claim(self, node: models.Node, effect: str
              ) -> tuple[str, Claim | None]:
        """The outcome of the claim (:data:`ledger.CLAIMED`, ``TAKEN`` or
        ``STALE``) and the claim to act under (None when stale). A claim
        found taken is waited out first."""
        began = self.clock()
        found = self._take(node, effect)
        if found.stamp is None:
            return found.outcome, None
        if found.outcome == ledger.TAKEN:
            self._wait_out(node, effect, found.previous)
        return found.outcome, Claim(self, node, effect, found.stamp,
                                    began + self.window)

    def _take(self, node: models.Node, effect: str) -> ledger.Claimed:
        try:
            return self._store.transaction(ledger.claim, node, effect)
        except sa.exc.IntegrityError:
            # NOTE: another delivery inserted the claim between our read
            # and our insert (MariaDB): it is taken, stamped just now.
            found = self._store.transaction(ledger.claim, node, effect)
            return found._replace(previous=found.previous or self._wall())

    def _wait_out(self, node: models.Node, effect: str,
                  previous: datetime.datetime | None) -> None:
        """Wait until a claim stamped at ``previous`` cannot be acted
        on any more (a whole window when unknown)."""
        left = self.window + MARGIN
        if previous is not None:
            age = (self._wall() - previous).total_seconds()
            left = min(left, max(0.0, left - age))
        if left > 0:
            LOG.info('Waiting %.1f s for the earlier claim of %s of node %s '
                     'to lapse', left, effect, node.uuid)
            if self._stop.wait(left):
                raise retry.Interrupted('the wait for an earlier claim')

    def renew(self, node: models.Node, effect: str,
              stamp: int) -> int | None:
        return self._store.transaction(ledger.renew_claim, node, effect,
                                       stamp)
