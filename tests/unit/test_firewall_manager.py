"""The firewall's lists and the port watcher, without a network."""

import functools
import threading
import time

from inspector_ha.common import metrics
from inspector_ha.coordination import election
from inspector_ha.firewall import base
from inspector_ha.firewall import lists as lists_mod
from inspector_ha.firewall import manager
from inspector_ha.firewall import sources
from inspector_ha.firewall import watcher as watcher_mod
from inspector_ha import service as service_mod

import backends


class FakeIronic:
    def __init__(self):
        self.ports = []

    def all_ports(self, after=None):
        ids = [p['id'] for p in self.ports]
        start = ids.index(after) + 1 if after else 0
        return self.ports[start:]


class Recorder:
    def __init__(self):
        self.announced = []

    def blacklist(self, op, port_id, mac):
        self.announced.append((op, port_id, mac))


def _port(n):
    return {'id': 'port-%d' % n, 'address': '52:54:00:00:00:%02x' % n,
            'extra': {}}


def test_the_watcher_announces_only_ports_created_after_its_first_run():
    ironic, bus = FakeIronic(), Recorder()
    watch = watcher_mod.PortWatcher(bus, functools.partial(
        sources.ironic_ports, ironic, []))
    watch(None)
    ironic.ports.append(_port(1))
    watch(None)
    watch(None)
    ironic.ports.append(_port(2))
    watch(None)
    assert bus.announced == [('add', 'port-1', '52:54:00:00:00:01'),
                             ('add', 'port-2', '52:54:00:00:00:02')]


class CountingIronic(FakeIronic):
    def __init__(self):
        super().__init__()
        self.listings = 0

    def all_ports(self, after=None):
        self.listings += 1
        return super().all_ports(after)


def _sync_for(lists, ironic, period, follow_for):
    stop = threading.Event()
    sync = manager.BlacklistSync(
        lists, functools.partial(sources.ironic_ports, ironic, []), period,
        stop, follow_for=follow_for)
    return sync, stop


def test_a_member_lists_ironic_itself_only_while_no_whole_list_comes():
    ironic, lists = CountingIronic(), lists_mod.Lists(deny_unknown=False)
    ironic.ports.append(_port(1))
    sync, stop = _sync_for(lists, ironic, 0.2, follow_for=0.3)
    sync.start()
    try:
        assert lists.black_built.wait(5)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            lists.replace_black({'port-1': '52:54:00:00:00:01'},
                                announced=True)
            time.sleep(0.05)
        followed = ironic.listings
        time.sleep(1.0)
        alone = ironic.listings - followed
    finally:
        stop.set()
        sync.join(5)
    assert followed == 1, 'listed while whole lists came'
    assert alone >= 3, 'did not list once they stopped'


def test_without_pub_sub_a_member_lists_every_period_whatever_comes():
    ironic, lists = CountingIronic(), lists_mod.Lists(deny_unknown=False)
    sync, stop = _sync_for(lists, ironic, 0.2, follow_for=0.0)
    sync.start()
    try:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            lists.replace_black({}, announced=True)
            time.sleep(0.05)
    finally:
        stop.set()
        sync.join(5)
    assert ironic.listings >= 4


def test_the_lister_announces_every_port_of_ironic():
    ironic = FakeIronic()
    ironic.ports += [_port(1), _port(2)]

    class Snapshots:
        def __init__(self):
            self.sent = []

        def blacklist_snapshot(self, ports):
            self.sent.append(ports)
            return True
    bus = Snapshots()
    watcher_mod.BlacklistLister(bus, functools.partial(
        sources.ironic_ports, ironic, []))(None)
    assert bus.sent == [{'port-1': '52:54:00:00:00:01',
                         'port-2': '52:54:00:00:00:02'}]


def test_macs_are_kept_in_lower_case_whoever_reports_them():
    lists = lists_mod.Lists(deny_unknown=False)
    lists.replace_black({'port-1': '02:00:00:00:00:AA'})
    lists.black('add', 'port-2', '02:00:00:00:00:BB')
    lists.replace_white({'node-1': ['02:00:00:00:00:CC']})
    lists.white('add', 'node-2', ['02:00:00:00:00:DD'])
    state = lists.state(open_for=1.0)
    assert state.blacklist == {'02:00:00:00:00:aa', '02:00:00:00:00:bb'}
    assert state.whitelist == {'02:00:00:00:00:cc', '02:00:00:00:00:dd'}


def test_the_white_list_is_part_of_the_state_only_when_open():
    lists = lists_mod.Lists(deny_unknown=False)
    lists.replace_black({'p1': '52:54:00:00:00:01'})
    lists.white('add', 'node-1', ['52:54:00:00:00:02'])
    assert lists.changed.is_set()
    closed, opened = lists.state(None), lists.state(2.0)
    assert closed.whitelist == frozenset()
    assert opened.whitelist == {'52:54:00:00:00:02'}
    assert closed.blacklist == opened.blacklist == {'52:54:00:00:00:01'}
    lists.white('remove', 'node-1', [])
    assert lists.state(2.0).whitelist == frozenset()


def test_a_list_that_did_not_change_keeps_its_set_of_macs_between_states():
    lists = lists_mod.Lists(deny_unknown=False)
    ports = {'p%d' % i: '52:54:00:00:%02x:%02x' % (i // 256, i % 256)
             for i in range(1000)}
    lists.replace_black(ports)
    first = lists.state(2.0)
    lists.white('add', 'node-1', ['52:54:00:01:00:01'])
    lists.replace_black(dict(ports))
    second = lists.state(2.0)
    assert second.blacklist is first.blacklist
    assert second.whitelist == {'52:54:00:01:00:01'}
    closed = lists.state(None)
    assert closed.blacklist is first.blacklist
    assert closed.whitelist is base.CLOSED.whitelist
    lists.replace_white({'node-1': ['52:54:00:01:00:01']})
    lists.black('add', 'p0', ports['p0'])
    again = lists.state(2.0)
    assert again.whitelist is second.whitelist
    assert again.blacklist is second.blacklist
    lists.black('add', 'p-new', '52:54:00:01:00:02')
    third = lists.state(2.0)
    assert third.whitelist is second.whitelist
    assert base.mac_changes(second.blacklist, third.blacklist) == (
        ['52:54:00:01:00:02'], [])
    lists.black('remove', 'p-new', '')
    lists.white('remove', 'node-1', [])
    assert lists.state(2.0) == (2.0, frozenset(), first.blacklist, False)


class RecordingDriver(base.Driver):
    """A driver plugin that only records when each state was applied."""

    def __init__(self, conf):
        super().__init__(conf, runner=None)
        self.applied_at = []

    def init(self):
        self.applied = base.CLOSED

    def apply(self, state):
        self.applied = state
        self.applied_at.append((time.monotonic(), state.is_open))

    def block(self):
        self.applied = base.CLOSED


class SilentBus:
    def serve(self, lists):
        pass

    def serve_whitelist(self, lists, until):
        return None

    def stop(self, server):
        pass


def _firewall(service, driver):
    return manager.Firewall(driver=driver, bus=SilentBus(),
                            election=service.election(manager.LEADERSHIP),
                            store=service.store, lifecycle=service.lifecycle,
                            opts=service.conf.pxe_filter,
                            campaign=election.Campaign(1.0, 1.0, 0.0))


def test_a_new_leader_waits_the_whole_lease_whatever_changes_meanwhile(
        service):
    service.conf.set_override('open_lease', 0.5, 'pxe_filter')
    driver = RecordingDriver(service.conf)
    firewall = _firewall(service, driver)
    firewall.lists.replace_black({})
    elected = time.monotonic()
    leading = threading.Thread(
        target=firewall._election.hold, args=(firewall._lead,), daemon=True)
    leading.start()
    while not any(is_open for _, is_open in driver.applied_at):
        firewall.lists.black('add', 'port-%f' % time.monotonic(),
                             '52:54:00:00:00:01')
        assert time.monotonic() - elected < 10, 'never opened'
        time.sleep(0.01)
    firewall.reset.set()
    leading.join(10)
    opened = min(at for at, is_open in driver.applied_at if is_open)
    assert opened - elected >= 0.5


def test_the_applied_state_shows_in_the_pxe_metrics_until_blocked(service):
    driver = RecordingDriver(service.conf)
    driver.init()
    firewall = _firewall(service, driver)
    firewall.lists.replace_black({'p1': '52:54:00:00:00:01',
                                  'p2': '52:54:00:00:00:02'})
    firewall.lists.white('add', 'node-1', ['52:54:00:00:00:03'])
    firewall._apply(2.0)
    assert _gauge(metrics.PXE_OPEN) == 1
    assert _gauge(metrics.PXE_LIST_SIZE.labels('blacklist')) == 2
    assert _gauge(metrics.PXE_LIST_SIZE.labels('whitelist')) == 1
    firewall.block()
    assert _gauge(metrics.PXE_OPEN) == 0
    assert _gauge(metrics.PXE_LIST_SIZE.labels('whitelist')) == 0


def _gauge(gauge):
    return gauge._value.get()


def _lead(firewall):
    leading = threading.Thread(
        target=firewall._election.hold, args=(firewall._lead,), daemon=True)
    leading.start()
    return leading


def test_the_leader_applies_a_burst_of_white_list_changes_at_once(service):
    service.conf.set_override('open_lease', 3.0, 'pxe_filter')
    service.conf.set_override('apply_delay', 0.5, 'pxe_filter')
    # NOTE: the store has none of these nodes: no polling to undo them.
    service.conf.set_override('whitelist_period', 0.0, 'pxe_filter')
    driver = RecordingDriver(service.conf)
    firewall = _firewall(service, driver)
    firewall.lists.replace_black({})
    leading = _lead(firewall)
    try:
        backends.wait_for(lambda: any(o for _, o in driver.applied_at), 20,
                         message='PXE never opened')
        before = len(driver.applied_at)
        for n in range(10):
            firewall.lists.white('add', 'node-%d' % n,
                                 ['52:54:00:00:01:%02x' % n])
            time.sleep(0.03)
        backends.wait_for(lambda: len(driver.applied[1]) == 10, 10,
                         message='the white-list was not applied')
    finally:
        firewall.reset.set()
        leading.join(10)
    # NOTE: one apply per change without gathering (10).
    assert len(driver.applied_at) - before <= 3


def _gathering(service):
    """A firewall holding a white-list change not applied yet, with
    ``apply_delay`` 0.5 s."""
    service.conf.set_override('apply_delay', 0.5, 'pxe_filter')
    firewall = _firewall(service, RecordingDriver(service.conf))
    firewall.lists.white('add', 'node-1', ['52:54:00:00:00:01'])
    return firewall


def _paused(firewall, seconds):
    """Seconds ``firewall._pause(seconds)`` took."""
    began = time.monotonic()
    firewall._pause(seconds)
    return time.monotonic() - began


def test_gathering_white_list_changes_ends_at_a_black_list_change(service):
    firewall = _gathering(service)
    gathered = _paused(firewall, 5.0)
    firewall._apply(2.0)
    firewall.lists.white('add', 'node-2', ['52:54:00:00:00:02'])
    firewall.lists.black('add', 'port-1', '52:54:00:00:00:09')
    assert 0.5 <= gathered < 5.0
    assert _paused(firewall, 5.0) < 0.5


def test_gathering_ends_at_a_reset_and_never_outlasts_the_pause(service):
    firewall = _gathering(service)
    assert _paused(firewall, 0.1) < 0.5
    firewall._apply(2.0)
    firewall.lists.white('add', 'node-2', ['52:54:00:00:00:02'])
    firewall.interrupt()
    assert _paused(firewall, 5.0) < 0.5


class SlowBus(SilentBus):
    """Serves the white-list channel only once ``release`` is set (the
    broker slow to answer)."""

    def __init__(self):
        self.release = threading.Event()

    def serve_whitelist(self, lists, until):
        self.release.wait(30)
        return None


def _white_list_read_again(service, monkeypatch, bus, when_open,
                           catch_up=()):
    """The white-list a leader (``open_lease`` 0.5 s, no
    ``whitelist_period``) applies after a node enters the store once PXE
    is open, and ``when_open()`` has run."""
    service.conf.set_override('open_lease', 0.5, 'pxe_filter')
    service.conf.set_override('whitelist_period', 0.0, 'pxe_filter')
    in_store = {}
    monkeypatch.setattr(manager.sources, 'under_introspection',
                        lambda conn: dict(in_store))
    driver = RecordingDriver(service.conf)
    firewall = manager.Firewall(
        driver=driver, bus=bus, election=service.election(
            manager.LEADERSHIP), store=service.store,
        lifecycle=service.lifecycle, opts=service.conf.pxe_filter,
        campaign=election.Campaign(1.0, 1.0, 0.0), catch_up=catch_up)
    firewall.lists.replace_black({})
    firewall.catch_up()
    leading = _lead(firewall)
    try:
        backends.wait_for(lambda: any(o for _, o in driver.applied_at), 20,
                          message='PXE never opened')
        in_store['node-1'] = {'52:54:00:00:00:01'}
        when_open()
        backends.wait_for(lambda: driver.applied[1], 10,
                          message='the store was not read again')
        return driver.applied[1]
    finally:
        firewall.reset.set()
        leading.join(10)


def test_a_leader_whose_channel_started_late_reads_the_store_again(
        service, monkeypatch):
    # NOTE: the node was announced while no channel served it: heard by
    # no one.
    bus = SlowBus()
    white = _white_list_read_again(service, monkeypatch, bus,
                                   bus.release.set)
    assert white == frozenset({'52:54:00:00:00:01'})


def test_a_leader_reads_the_store_again_once_every_worker_counts_it(
        service, monkeypatch):
    """Workers that did not count this member as a firewall yet sent it
    no change: it reads the store at its catch-up times, even with no
    whitelist_period."""
    white = _white_list_read_again(service, monkeypatch, SilentBus(),
                                   lambda: None, catch_up=(1.5,))
    assert white == frozenset({'52:54:00:00:00:01'})


def test_a_worker_on_in_process_messaging_without_a_firewall_announces_nothing(
        service_conf):
    """``fake://`` reaches this process alone, and its firewall, with the
    noop driver, listens to nothing: no bus is made, no cast is sent."""
    svc = service_mod.Service(service_conf)
    try:
        svc.start(workers=True, periodic_jobs=False)
        assert svc.bus is None
        svc.announce_whitelist('add', 'node-1', ['52:54:00:00:00:01'])
    finally:
        svc.shutdown()
