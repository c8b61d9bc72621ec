"""noop: filters nothing, remembers the state it was given."""

from inspector_ha.firewall import base


class NoopDriver(base.Driver):
    """For the quick start and for tests: no host firewall is touched."""

    def init(self) -> None:
        self.applied = base.CLOSED

    def apply(self, state: base.State) -> None:
        self.applied = state

    def block(self) -> None:
        self.applied = base.CLOSED
