"""The firewall channels across releases: versioned objects once every
live member reads them, the previous release's call until then; a
member of this release understands both."""

import threading
import time

import pytest

import backends

from inspector_ha.firewall import bus as bus_mod
from inspector_ha.messaging import objects


class _Lists:
    """Records what the channels deliver (the firewall's lists)."""

    def __init__(self):
        self.seen = []
        self.event = threading.Event()

    def white(self, op, node_uuid, macs):
        self.seen.append(('white', op, node_uuid, list(macs)))
        self.event.set()

    def black(self, op, port_id, mac):
        self.seen.append(('black', op, port_id, mac))
        self.event.set()

    def replace_black(self, ports, announced=False):
        self.seen.append(('whole black-list', dict(ports), announced))
        self.event.set()


class _Pinned:
    """A :class:`releases.Releases` answering for a fixed release (and
    whether a live member may run a PXE firewall)."""

    def __init__(self, release, firewall=True):
        self.release = release
        self.firewall = firewall

    def effective(self):
        return self.release

    def firewall_anywhere(self):
        return self.firewall


@pytest.mark.parametrize('release, method', [('0.1.0', 'whitelist'),
                                             ('0.2.0', 'announce')])
def test_an_announcement_uses_what_the_oldest_member_reads(
        service, release, method):
    bus = bus_mod.Bus(service.conf, 'member-a', _Pinned(release))
    lists = _Lists()
    called = []
    receiver_cls = bus_mod._Receiver
    original = getattr(receiver_cls, method)

    def spy(self, *args, **kwargs):
        called.append(method)
        return original(self, *args, **kwargs)
    setattr(receiver_cls, method, spy)
    try:
        bus.serve(lists)
        bus.serve_whitelist(lists, threading.Event())
        bus.whitelist('add', 'node-1', {'52:54:00:00:00:02',
                                        '52:54:00:00:00:01'})
        assert lists.event.wait(10), 'nothing delivered'
    finally:
        setattr(receiver_cls, method, original)
        bus.close()
    assert lists.seen == [('white', 'add', 'node-1', [
        '52:54:00:00:00:01', '52:54:00:00:00:02'])]
    assert called == [method]


def test_a_member_not_serving_the_white_list_channel_gets_no_change_of_it(
        service):
    bus = bus_mod.Bus(service.conf, 'member-e', _Pinned('0.2.0'))
    leader, member = _Lists(), _Lists()
    try:
        bus.serve(member)
        bus.serve_whitelist(leader, threading.Event())
        bus.whitelist('add', 'node-1', ['52:54:00:00:00:01'])
        assert leader.event.wait(10), 'the leader got no white-list change'
        # NOTE: sent after the white-list change, on the member's channel.
        bus.blacklist('add', 'port-1', '52:54:00:00:00:09')
        assert member.event.wait(10), 'the member got no black-list change'
    finally:
        bus.close()
    assert member.seen == [('black', 'add', 'port-1', '52:54:00:00:00:09')]
    assert leader.seen == [('white', 'add', 'node-1', ['52:54:00:00:00:01'])]


def test_no_white_list_change_is_sent_while_no_member_runs_a_firewall(
        service):
    quiet = _Pinned('0.2.0', firewall=False)
    bus = bus_mod.Bus(service.conf, 'member-g', quiet)
    leader = _Lists()
    try:
        bus.serve_whitelist(leader, threading.Event())
        bus.whitelist('add', 'node-1', ['52:54:00:00:00:01'])
        quiet.firewall = True
        bus.whitelist('add', 'node-2', ['52:54:00:00:00:02'])
        assert leader.event.wait(10), 'the leader got no white-list change'
    finally:
        bus.close()
    assert leader.seen == [('white', 'add', 'node-2', ['52:54:00:00:00:02'])]


def test_a_leadership_terms_channel_closes_at_once(
        service):
    bus = bus_mod.Bus(service.conf, 'member-f', _Pinned('0.2.0'))
    leader = _Lists()
    try:
        channel = bus_mod.LeaderChannel(bus, leader)
        backends.wait_for(lambda: channel._server is not None, 10,
                          message='the channel never started')
        bus.whitelist('add', 'node-1', ['52:54:00:00:00:01'])
        assert leader.event.wait(10), 'the leader got no white-list change'
        began = time.monotonic()
        channel.close()
        closing = time.monotonic() - began
    finally:
        bus.close()
    # NOTE: stopping the server takes about a second once it has handled
    # a message; the firewall thread must not wait for it.
    assert closing < 0.5


def test_a_change_delivered_after_its_term_ended_is_dropped(service):
    lists, ended = _Lists(), threading.Event()
    receiver = bus_mod._Receiver(lists, service.conf.pxe_filter, ended)
    change = objects.to_primitive(objects.WhitelistChange(
        op='add', node_uuid='node-1', macs=['52:54:00:00:00:01']))
    receiver.announce({}, change)
    ended.set()
    receiver.announce({}, change)
    assert lists.seen == [('white', 'add', 'node-1', ['52:54:00:00:00:01'])]


def test_a_blacklist_change_arrives_as_an_object(service):
    bus = bus_mod.Bus(service.conf, 'member-b', _Pinned('0.2.0'))
    lists = _Lists()
    try:
        bus.serve(lists)
        bus.blacklist('remove', 'port-1', '52:54:00:00:00:09')
        assert lists.event.wait(10), 'nothing delivered'
    finally:
        bus.close()
    assert lists.seen == [('black', 'remove', 'port-1',
                           '52:54:00:00:00:09')]


def test_the_whole_blacklist_arrives_as_one_announced_object(service):
    bus = bus_mod.Bus(service.conf, 'member-c', _Pinned('0.2.0'))
    lists = _Lists()
    ports = {'port-%d' % i: '52:54:00:00:%02x:%02x' % (i >> 8, i & 255)
             for i in range(2000)}
    try:
        bus.serve(lists)
        assert bus.blacklist_snapshot(ports)
        assert lists.event.wait(10), 'nothing delivered'
    finally:
        bus.close()
    assert lists.seen == [('whole black-list', ports, True)]


def test_no_whole_blacklist_is_announced_while_a_0_1_0_member_lives(
        service):
    bus = bus_mod.Bus(service.conf, 'member-d', _Pinned('0.1.0'))
    try:
        assert not bus.blacklist_snapshot({'port-1': '52:54:00:00:00:01'})
    finally:
        bus.close()


def test_an_announcement_of_a_newer_release_is_ignored(service):
    lists = _Lists()
    receiver = bus_mod._Receiver(lists, service.conf.pxe_filter)
    change = objects.to_primitive(objects.BlacklistChange(
        op='add', port_id='p', mac='m'))
    change['versioned_object.version'] = '1.9'
    receiver.announce({}, change)
    assert lists.seen == []
