"""The PXE filter drivers against real DHCP: two inspector hosts running
dnsmasq in network namespaces, nodes asking with busybox udhcpc
(``netns.py``).  Host 1 plays the leader (open) and host 2 a follower
(closed) unless a test says otherwise."""

import concurrent.futures
import time

import pytest

from inspector_ha.firewall import base
import backends
import netns

DRIVERS = ['nftables', 'iptables', 'dnsmasq']
WHITE, BLACK, BOTH = ('02:00:00:00:01:01', '02:00:00:00:01:02',
                      '02:00:00:00:01:03')
UNKNOWN = '02:00:00:00:01:04'


def _state(open_for=30.0, white=(WHITE, BOTH), black=(BLACK, BOTH),
           deny_unknown=False):
    return base.State(open_for, frozenset(white), frozenset(black),
                      deny_unknown)


def _leases(nodes):
    """``{mac: server address or None}``, the nodes asking at once."""
    with concurrent.futures.ThreadPoolExecutor(len(nodes)) as pool:
        found = pool.map(lambda node: node.dhcp(timeout=2), nodes)
        return dict(zip([n.mac for n in nodes], found))


@pytest.fixture
def lab(tmp_path, obtain_backend):
    the_lab = obtain_backend(netns.Lab, tmp_path, hosts=2)
    yield the_lab
    the_lab.close()


@pytest.fixture(params=DRIVERS)
def drivers(request, lab):
    """One initialized driver per host (PXE blocked on both)."""
    loaded = [base.load(netns.filter_conf(request.param, host))
              for host in lab.hosts]
    for driver in loaded:
        driver.init()
    return loaded


@pytest.fixture
def nodes(lab):
    return {mac: lab.add_node(mac) for mac in (WHITE, BLACK, BOTH, UNKNOWN)}


def _leader_and_follower(drivers, **state):
    drivers[0].apply(_state(**state))
    drivers[1].apply(_state(open_for=None))


def test_closed_hosts_give_no_lease(drivers, nodes):
    for driver in drivers:
        driver.apply(_state(open_for=None))
    assert set(_leases(list(nodes.values())).values()) == {None}


def test_the_open_host_leases_a_whitelisted_mac(drivers, nodes, lab):
    _leader_and_follower(drivers)
    assert nodes[WHITE].dhcp() == lab.hosts[0].address


def test_a_blacklisted_node_gets_no_lease_from_the_open_host(drivers,
                                                             nodes):
    _leader_and_follower(drivers)
    assert nodes[BLACK].dhcp() is None


def test_an_unknown_mac_gets_a_lease_from_the_open_host(drivers, nodes,
                                                        lab):
    _leader_and_follower(drivers)
    assert nodes[UNKNOWN].dhcp() == lab.hosts[0].address


def test_with_deny_unknown_only_the_whitelist_gets_a_lease(drivers, nodes,
                                                           lab):
    _leader_and_follower(drivers, deny_unknown=True)
    assert _leases([nodes[UNKNOWN], nodes[WHITE]]) == {
        UNKNOWN: None, WHITE: lab.hosts[0].address}


def test_a_mac_in_both_lists_gets_a_lease(drivers, nodes, lab):
    _leader_and_follower(drivers)
    assert nodes[BOTH].dhcp() == lab.hosts[0].address


def test_block_after_open_closes_the_host(drivers, nodes, lab):
    _leader_and_follower(drivers)
    assert nodes[WHITE].dhcp() == lab.hosts[0].address
    drivers[0].block()
    assert _leases([nodes[WHITE], nodes[UNKNOWN]]) == {
        WHITE: None, UNKNOWN: None}


def test_after_a_failover_the_new_leader_serves(drivers, nodes, lab):
    _leader_and_follower(drivers)
    drivers[0].apply(_state(open_for=None))
    drivers[1].apply(_state())
    assert _leases([nodes[WHITE], nodes[BLACK]]) == {
        WHITE: lab.hosts[1].address, BLACK: None}


def test_a_mac_moved_between_the_lists_follows_each_change(drivers, nodes,
                                                           lab):
    leader = drivers[0]
    _leader_and_follower(drivers)
    leader.apply(_state(white=[BLACK], black=[WHITE]))
    assert _leases([nodes[BLACK], nodes[WHITE]]) == {
        BLACK: lab.hosts[0].address, WHITE: None}
    leader.apply(_state(white=[WHITE], black=[BLACK]))
    assert _leases([nodes[BLACK], nodes[WHITE]]) == {
        BLACK: None, WHITE: lab.hosts[0].address}


def test_a_mac_that_left_both_lists_is_treated_as_unknown(drivers, nodes,
                                                          lab):
    leader = drivers[0]
    _leader_and_follower(drivers)
    leader.apply(_state(white=[], black=[]))
    assert nodes[BLACK].dhcp() == lab.hosts[0].address
    leader.apply(_state(white=[], black=[], deny_unknown=True))
    assert nodes[WHITE].dhcp() is None


def test_describe_reports_what_was_applied(drivers):
    _leader_and_follower(drivers)
    described = drivers[0].describe()
    assert (described['open'], described['whitelist'],
            described['blacklist']) == (True, 2, 2)
    assert drivers[1].describe()['open'] is False


@pytest.mark.parametrize('drivers', ['nftables'], indirect=True)
def test_an_open_nftables_host_closes_by_itself_unless_renewed(drivers,
                                                               nodes, lab):
    leader = drivers[0]
    assert leader.leased
    leader.apply(_state(open_for=1.5))
    renewing_until = time.monotonic() + 2.5  # longer than the lease
    while time.monotonic() < renewing_until:
        leader.renew(1.5)
        assert leader.lease_remaining() > 1.0
    assert nodes[WHITE].dhcp() == lab.hosts[0].address
    backends.wait_for(lambda: leader.lease_remaining() == 0, 5,
                      message='the nftables lease never expired')
    assert nodes[WHITE].dhcp() is None


@pytest.mark.parametrize('drivers', ['nftables', 'iptables'],
                         indirect=True)
def test_a_ruleset_flushed_behind_the_drivers_back_is_rebuilt(drivers,
                                                              nodes, lab):
    leader = drivers[0]
    _leader_and_follower(drivers)
    leader.runner.run(['nft', 'flush', 'ruleset'])
    leader.apply(_state(deny_unknown=True))
    assert _leases([nodes[BLACK], nodes[UNKNOWN], nodes[WHITE]]) == {
        BLACK: None, UNKNOWN: None, WHITE: lab.hosts[0].address}


@pytest.mark.parametrize('name', DRIVERS)
def test_block_closes_a_host_whose_driver_never_ran_init(name, lab, nodes):
    assert nodes[UNKNOWN].dhcp() is not None
    for host in lab.hosts:
        base.load(netns.filter_conf(name, host)).block()
    assert nodes[UNKNOWN].dhcp() is None
