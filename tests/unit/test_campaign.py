"""When a member that does not lead tries for a leadership: fast after
a start or a shrink of the group, else at the steady safety-net rate."""

import threading
import time

from inspector_ha.coordination import election
from inspector_ha.engine import leadership


class _HeldElsewhere:
    """An election another member always holds; records each try."""

    name = 'timeout'
    epoch = None

    def __init__(self):
        self.tries = []

    def hold(self, lead):
        self.tries.append(time.monotonic())
        return False


def test_a_campaign_tries_every_period_while_hurried_then_at_the_steady_one():
    campaign = election.Campaign(0.5, 60.0, hurry_for=1.0)
    assert campaign.due()
    campaign.tried()
    assert 0 < campaign.wait_time() <= 0.5
    time.sleep(1.05)
    campaign.tried()
    assert campaign.wait_time() > 50


def test_a_hurried_campaign_is_due_at_once_and_fast_again():
    campaign = election.Campaign(0.5, 60.0, hurry_for=0.1)
    time.sleep(0.15)
    campaign.tried()
    assert not campaign.due()
    campaign.hurry()
    assert campaign.due()
    campaign.tried()
    assert campaign.wait_time() <= 0.5


def _loop(service, held, campaign):
    return leadership.LeaderLoop(election=held, period=60,
                                 job=lambda fence: None,
                                 lifecycle=service.lifecycle,
                                 campaign=campaign)


def test_a_member_that_sees_the_group_shrink_tries_at_once_and_hurries(
        service):
    held = _HeldElsewhere()
    loop = _loop(service, held, election.Campaign(0.05, 60.0, hurry_for=0.5))
    thread = threading.Thread(target=loop._campaign_forever, daemon=True)
    thread.start()
    try:
        time.sleep(0.8)
        settled = len(held.tries)
        # NOTE: 0.5 s of hurrying at 0.05 s, then the steady 60 s.
        assert 5 <= settled <= 14, held.tries
        time.sleep(0.3)
        assert len(held.tries) == settled
        shrunk = time.monotonic()
        loop.reset.set()
        time.sleep(0.3)
        assert held.tries[settled] - shrunk < 0.5
        assert len(held.tries) - settled >= 3
    finally:
        service.lifecycle.stop.set()
        loop.reset.set()
        thread.join(5)
    assert not thread.is_alive()
