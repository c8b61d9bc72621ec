"""The HA PXE firewall end to end: 3 worker processes, each managing the
nftables filter of its own inspector host (a network namespace running a
real dnsmasq), a real Ironic, RabbitMQ, Redis and PostgreSQL, and nodes
asking for a lease with busybox udhcpc (``netns.py``)."""

import collections
import signal
import threading
import time

import pytest
import requests

import backends
import batch
import firewalled as firewalled_mod
from firewalled import blacklisted, is_open, whitelisted

#: Seconds the open hosts are sampled after a frozen leader wakes up.
AFTER_WAKING = 5.0


class Sampler(threading.Thread):
    """Samples which hosts are open, as fast as nft answers."""

    def __init__(self, hosts):
        super().__init__(daemon=True)
        self.hosts = hosts
        self.samples = []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.samples.append((time.monotonic(), [
                h.index for h in self.hosts if is_open(h)]))

    def stop(self):
        self.done.set()
        self.join(10)
        return self.samples


@pytest.fixture
def firewalled(request, tmp_path, ironic, rabbit_url, pg_url, redis_url):
    setup = firewalled_mod.Firewalled(tmp_path, ironic, rabbit_url, pg_url,
                                      redis_url,
                                      **getattr(request, 'param', {}))
    try:
        backends.wait_for(lambda: len(setup.open_hosts()) == 1, 60,
                          message='no host opened PXE')
        yield setup
    finally:
        setup.close()


def _node_under_introspection(setup):
    payloads = batch.create_nodes(setup.ironic, 1)
    setup.nodes.extend(payloads)
    uuid, payload = next(iter(payloads.items()))
    mac = payload['inventory']['interfaces'][0]['mac_address']
    batch.start_all([setup.api], [uuid])
    backends.wait_for(lambda: batch.states(setup.api, [uuid])[uuid][
        'state'] == 'waiting', 60, message='node not waiting')
    return uuid, setup.lab.add_node(mac)


def _known_node(setup):
    payloads = batch.create_nodes(setup.ironic, 1)
    setup.nodes.extend(payloads)
    mac = next(iter(payloads.values()))['inventory']['interfaces'][0][
        'mac_address']
    backends.wait_for(lambda: all(blacklisted(h, mac)
                                  for h in setup.lab.hosts), 30,
                      message='known MAC not blacklisted everywhere')
    return setup.lab.add_node(mac)


def test_only_the_leaders_host_serves_and_only_nodes_it_should(firewalled):
    leader = firewalled.leader_host()
    assert firewalled.open_hosts() == [leader]
    uuid, introspected = _node_under_introspection(firewalled)
    known = _known_node(firewalled)
    unknown = firewalled.lab.add_node('02:00:5e:10:00:01')
    assert introspected.dhcp(timeout=3) == leader.address
    assert known.dhcp(timeout=3) is None
    assert unknown.dhcp(timeout=3) == leader.address
    served = [h.index for h in firewalled.lab.hosts
              if 'DHCPACK' in h.log_text()]
    assert served == [leader.index], served
    shown = {m.split('.')[0]: c.get('firewall') for m, c in
             firewalled.status()['members'].items()}
    assert [n for n, f in shown.items() if f and f['open']] == [
        'worker-%d' % (leader.index - 1)], shown
    _ended_introspection_leaves_the_white_list(firewalled, leader, uuid,
                                               introspected)


def _ended_introspection_leaves_the_white_list(setup, leader, uuid, node):
    """Abort: the node's MAC leaves the leader's white-list within 1 s
    (the worker announces it) and, Ironic knowing it, it gets no lease."""
    assert whitelisted(leader, node.mac)
    resp = requests.post('%s/v1/introspection/%s/abort' % (setup.api, uuid),
                         timeout=30)
    assert resp.status_code == 202, resp.text
    backends.wait_for(lambda: batch.states(setup.api, [uuid])[uuid][
        'finished'], 30, interval=0.02, message='abort did not finish')
    ended = time.monotonic()
    backends.wait_for(lambda: not whitelisted(leader, node.mac), 5,
                      interval=0.02, message='MAC still white-listed')
    took = time.monotonic() - ended
    print('MAC off the white-list %.2f s after the abort finished' % took)
    assert took < 1.0
    assert node.dhcp(timeout=3) is None


@pytest.mark.parametrize('firewalled', [{'deny_unknown_macs': 'true'}],
                         indirect=True)
def test_with_deny_unknown_macs_only_introspected_nodes_boot(firewalled):
    leader = firewalled.leader_host()
    _uuid, introspected = _node_under_introspection(firewalled)
    unknown = firewalled.lab.add_node('02:00:5e:10:00:02')
    assert introspected.dhcp(timeout=3) == leader.address
    assert unknown.dhcp(timeout=3) is None


def _explain_stall(setup, uuid, samples):
    """What a failed failover leaves behind: which hosts were open, the
    node's status, every process's thread stacks (in its log)."""
    opened = collections.Counter(tuple(o) for _, o in samples)
    print('open hosts over %d samples: %s' % (len(samples), dict(opened)))
    print('node status: %s' % batch.states(setup.api, [uuid]))
    setup.cluster.dump_stacks()
    print(setup.cluster.logs(200))


# NOTE: one CI run once saw the new leader serve nothing for 30 s; with the
# fixes since (no delete of a node started during a listing, the whole
# lease waited out) it passed every run, 8 of them with both cores busy.
# Should it stall again, the log shows the open hosts sampled, the node's
# status and every thread's stack.
@pytest.mark.parametrize('signum', [signal.SIGKILL, signal.SIGSTOP],
                         ids=['killed', 'frozen'])
def test_a_killed_or_frozen_leader_moves_pxe_with_at_most_one_host_open(
        firewalled, signum):
    """A frozen leader (SIGSTOP: its process and its nftables rules stay)
    is woken once another host serves, and the open hosts are sampled
    for :data:`AFTER_WAKING` more seconds: it does not open again."""
    uuid, node = _node_under_introspection(firewalled)
    old = firewalled.leader_host()
    assert node.dhcp(timeout=3) == old.address
    sampler = Sampler(firewalled.lab.hosts)
    sampler.start()
    worker = firewalled.cluster.workers[old.index - 1]
    worker.send_signal(signum)
    signalled = time.monotonic()
    try:
        served = backends.wait_for(
            lambda: (lambda s: s if s not in (None, old.address) else None)(
                node.dhcp(timeout=1)), 30, interval=0,
            message='no other host served the node')
        took = time.monotonic() - signalled
        if signum == signal.SIGSTOP:
            worker.send_signal(signal.SIGCONT)
            woken = time.monotonic() + AFTER_WAKING
            backends.wait_for(lambda: time.monotonic() >= woken,
                              AFTER_WAKING + 1, interval=0.1)
    except TimeoutError:
        _explain_stall(firewalled, uuid, sampler.stop())
        raise
    finally:
        worker.send_signal(signal.SIGCONT)
        samples = sampler.stop()
    print('PXE failover after %s of the leader: %.2f s (served by %s); '
          '%d samples' % (signal.Signals(signum).name, took, served,
                          len(samples)))
    assert took < 10.0
    assert max(len(open_) for _, open_ in samples) <= 1, [
        s for s in samples if len(s[1]) > 1][:5]
    assert collections.Counter(tuple(o) for _, o in samples)[
        (old.index,)] > 0


def _a_new_port_blacklisted_after(setup, timeout):
    return firewalled_mod.blacklisted_everywhere(
        setup, *firewalled_mod.add_port(setup), timeout)


def test_a_port_added_to_ironic_is_blacklisted_everywhere_within_a_second(
        firewalled):
    took = [_a_new_port_blacklisted_after(firewalled, 5) for _ in range(5)]
    print('ports blacklisted on every host after: %s s (pub-sub)' %
          ', '.join('%.2f' % t for t in took))
    assert max(took) < 1.0


@pytest.mark.parametrize('firewalled', [{'blacklist_pubsub': 'false',
                                         'sync_period': 2}], indirect=True)
def test_without_pub_sub_a_new_port_is_blacklisted_within_one_period(
        firewalled):
    took = [_a_new_port_blacklisted_after(firewalled, 10) for _ in range(3)]
    listing = _port_listing_time(firewalled.ironic)
    print('ports blacklisted on every host after: %s s (sync period 2 s, '
          'no pub-sub; listing Ironic\'s ports takes %.2f s)' % (
              ', '.join('%.2f' % t for t in took), listing))
    # NOTE: one period, plus one listing of Ironic's ports (which grows with
    # Ironic's size and load) and one nft transaction. The listing timed
    # here, after the fact, is not the one that ran: on a loaded machine
    # (CI: 3.62 s once, against 2.0 + 2 x 0.22 + 0.3) that one can take a
    # period longer, so the bound allows a second period; a sync that
    # misses a period twice, or never runs, still fails it.
    assert max(took) < 2 * 2.0 + 2 * listing + 1.0


#: The first page of a listing of every Ironic port (the port watcher's
#: listings name a marker), as Ironic logs the request.
FULL_PORT_LISTING = 'GET /v1/ports?fields=uuid%2Caddress%2Cextra '


def _full_port_listings(ironic, seconds):
    """How many listings of every port Ironic served in ``seconds``."""
    with open(ironic.log_path, 'rb') as log:
        log.seek(0, 2)
        time.sleep(seconds)
        return log.read().decode(errors='replace').count(FULL_PORT_LISTING)


@pytest.mark.parametrize('firewalled', [{'blacklist_list_period': 2,
                                         'sync_period': 1}], indirect=True)
def test_one_member_lists_every_port_for_all_and_a_deleted_port_leaves(
        firewalled):
    # NOTE: a port first: the port watcher's listings name the last port
    # it saw; in an Ironic without ports, they list every port.
    mac, _ = firewalled_mod.add_port(firewalled)
    firewalled_mod.blacklisted_everywhere(firewalled, mac, 0, 5)
    listings = _full_port_listings(firewalled.ironic, 8)
    firewalled.ironic.delete_node(firewalled.nodes.pop())
    gone = time.monotonic()
    backends.wait_for(lambda: not any(blacklisted(h, mac)
                                      for h in firewalled.lab.hosts), 10,
                      interval=0.05, message='deleted port still listed')
    took = time.monotonic() - gone
    print('%d full port listings in 8 s (3 members, sync period 1 s, the '
          'lister every 2 s); deleted port left every host after %.2f s'
          % (listings, took))
    # NOTE: the lister every 2 s: 4 or 5 in 8 s; each member on its own
    # would have listed 8 times (24).
    assert 3 <= listings <= 6
    assert took < 2 * 2.0 + 1.0


def _port_listing_time(ironic):
    """Seconds one listing of every Ironic port takes, page by page."""
    began = time.monotonic()
    path = '/v1/ports?fields=uuid,address,extra&limit=1000'
    while path:
        page = ironic.request('GET', path)
        path = page.get('next', '').split('/v1', 1)[-1]
        path = '/v1' + path if path else None
    return time.monotonic() - began
