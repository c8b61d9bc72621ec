"""The pure parts of the PXE filter drivers: scripts, file diffs, the
InfiniBand mapping, the command runner.  Real packets:
tests/functional/test_pxe_filter_drivers.py."""

import random
import sys
import threading

from oslo_config import cfg
import pytest

from inspector_ha import conf as conf_mod
from inspector_ha.conf import opts
from inspector_ha.firewall import base
from inspector_ha.firewall import dnsmasq
from inspector_ha.firewall import infiniband
from inspector_ha.firewall import iptables
from inspector_ha.firewall import nftables
from inspector_ha.firewall import runner as runner_mod

A, B, C = '02:00:00:00:00:0a', '02:00:00:00:00:0b', '02:00:00:00:00:0c'


def _conf(**overrides):
    conf = cfg.ConfigOpts()
    for group, options in opts.list_opts():
        conf.register_opts(options, group=group)
    conf([], default_config_files=[], default_config_dirs=[])
    for key, value in overrides.items():
        group, name = key.split('__')
        conf.set_override(name, value, group)
    return conf


def _state(open_for=2.0, white=(), black=(), deny_unknown=False):
    return base.State(open_for, frozenset(white), frozenset(black),
                      deny_unknown)


def _runner(stop=None, timeout=5):
    return runner_mod.Runner([], timeout, stop)


# base


def test_invalid_macs_never_reach_a_firewall_script():
    assert base.clean_macs(['02:00:00:00:00:0A', 'x" drop; "',
                            '02:00:00:00:00', B + '\n']) == [A]


def test_only_the_macs_that_changed_are_cleaned_and_compared():
    site = frozenset('02:01:00:%02x:%02x:%02x' % (i >> 16, (i >> 8) & 255,
                                                i & 255)
                     for i in range(20000))
    added, removed = base.mac_changes(site | {A, 'x" drop; "'},
                                      site | {B, 'not a mac'})
    assert (added, removed) == ([B], [A])
    assert base.mac_changes(site, site) == ([], [])
    assert base.mac_changes(frozenset([A.upper()]), frozenset([A])) == \
        ([], [])


def test_the_default_driver_is_noop_and_remembers_the_state():
    driver = base.load(_conf())
    assert driver.name == 'noop'
    driver.apply(_state(white=[A]))
    assert driver.describe() == {'driver': 'noop', 'open': True,
                                 'whitelist': 1, 'blacklist': 0,
                                 'deny_unknown': False}
    driver.block()
    assert driver.describe()['open'] is False


def test_deny_unknown_macs_and_a_node_not_found_hook_exclude_each_other():
    with pytest.raises(ValueError, match='exclude each other'):
        base.load(_conf(pxe_filter__deny_unknown_macs=True,
                        processing__node_not_found_hook='enroll'))


def test_an_unknown_driver_is_refused_naming_the_installed_ones():
    with pytest.raises(ValueError) as caught:
        base.load(_conf(pxe_filter__driver='x'))
    assert str(caught.value).startswith(
        "[pxe_filter] driver: no PXE filter driver 'x' (installed: ")
    for name in ('dnsmasq', 'iptables', 'nftables', 'noop'):
        assert name in str(caught.value)


@pytest.mark.parametrize('name,group', [('iptables', 'iptables'),
                                        ('nftables', 'nftables'),
                                        ('dnsmasq', 'dnsmasq_pxe_filter')])
def test_a_driver_registers_its_own_option_group_when_it_is_loaded(
        name, group):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)  # the service's groups only
    conf([], default_config_files=[], default_config_dirs=[])
    assert group not in conf
    conf.set_override('driver', name, 'pxe_filter')
    conf.set_override('dnsmasq_interface', 'pxe0', 'pxe_filter')
    driver = base.load(conf)
    assert group in conf and driver.interface == 'pxe0'


# runner


def test_a_failed_command_raises_with_its_return_code_and_stderr():
    with pytest.raises(base.FirewallError) as caught:
        _runner().run(['sh', '-c', 'echo oops >&2; exit 3'])
    assert (caught.value.rc, caught.value.stderr) == (3, 'oops\n')


def test_the_prefix_and_stdin_reach_the_command():
    runner = runner_mod.Runner(['env', 'X=1'], 5)
    assert runner.run(['sh', '-c', 'cat; echo $X'], stdin='in\n') == \
        'in\n1\n'


def test_a_command_running_past_the_timeout_is_killed():
    with pytest.raises(base.FirewallError, match='timed out'):
        _runner(timeout=0.3).run([sys.executable, '-c',
                                  'import time; time.sleep(30)'])


def test_stopping_interrupts_a_command_but_not_an_urgent_one():
    stop = threading.Event()
    stop.set()
    runner = _runner(stop)
    with pytest.raises(base.FirewallError, match='interrupted'):
        runner.run(['sleep', '5'])
    assert runner.run(['sh', '-c', 'sleep 0.3; echo done'],
                      urgent=True) == 'done\n'


# nftables


def _nft(**overrides):
    return nftables.NftablesDriver(_conf(**overrides), _runner())


def test_an_nftables_rebuild_replaces_the_table_in_one_script():
    script = _nft().rebuild_script(_state(2.5, white=[A], black=[A, B]))
    assert script.startswith('table inet inspector_ha\n'
                             'delete table inet inspector_ha\n')
    assert 'set white { type ether_addr; elements = { %s }; }' % A in script
    assert 'elements = { %s, %s }' % (A, B) in script
    assert 'elements = { 67 timeout 2500ms }' in script
    assert 'iifname "br-ctlplane" udp dport { 67 } jump pxe' in script
    assert script.rstrip().endswith('accept\n  }\n}')


def test_a_closed_nftables_table_has_an_empty_pass_set():
    script = _nft().rebuild_script(_state(None, black=[B],
                                          deny_unknown=True))
    assert 'set pass { type inet_service; flags timeout; }' in script
    assert 'set white { type ether_addr; }' in script
    assert '    drop\n  }\n}' in script


def test_nftables_changes_touch_only_the_elements_and_the_lease():
    script = _nft().changes_script(_state(white=[A], black=[B]),
                                   _state(3, white=[B], black=[C]))
    assert script.splitlines() == [
        'add element inet inspector_ha white { %s }' % B,
        'delete element inet inspector_ha white { %s }' % A,
        'add element inet inspector_ha black { %s }' % C,
        'delete element inet inspector_ha black { %s }' % B,
        'flush set inet inspector_ha pass',
        'add element inet inspector_ha pass { 67 timeout 3000ms }']


def test_nftables_with_ip_version_6_filters_both_dhcp_ports():
    driver = _nft(pxe_filter__ip_version='6', nftables__table='t')
    assert driver.lease_script(1) == (
        'flush set inet t pass\n'
        'add element inet t pass { 67 timeout 1000ms, 547 timeout 1000ms }\n')
    assert 'udp dport { 67, 547 } drop' in driver.blocked_script()


def test_nftables_lease_times_are_read_from_nft_output():
    assert nftables._seconds('1s480ms') == 1.48
    assert nftables._seconds('2m3s') == 123


# iptables


def _ipt(**overrides):
    return iptables.IptablesDriver(_conf(**overrides), _runner())


def test_iptables_chains_fall_through_white_to_black_to_the_pass_rule():
    script = _ipt().rebuild_script(_state(white=[A], black=[A, B]), True)
    assert script.splitlines() == [
        '*filter',
        ':ironic-inspector-white - [0:0]',
        ':ironic-inspector-black - [0:0]',
        '-I INPUT 1 -i br-ctlplane -p udp --dport 67 '
        '-j ironic-inspector-white',
        '-A ironic-inspector-white -m mac --mac-source %s -j ACCEPT' % A,
        '-A ironic-inspector-white -j ironic-inspector-black',
        '-A ironic-inspector-black -m mac --mac-source %s -j DROP' % A,
        '-A ironic-inspector-black -m mac --mac-source %s -j DROP' % B,
        '-A ironic-inspector-black -j ACCEPT',
        'COMMIT']


def test_a_closed_iptables_filter_keeps_the_blacklist_but_drops_the_rest():
    lines = _ipt().rebuild_script(_state(None, white=[A], black=[B]))
    assert lines.splitlines()[3:-1] == [
        '-A ironic-inspector-white -j ironic-inspector-black',
        '-A ironic-inspector-black -m mac --mac-source %s -j DROP' % B,
        '-A ironic-inspector-black -j DROP']


def test_iptables_changes_delete_and_insert_rules_and_reassert_the_jump():
    jump = '-i br-ctlplane -p udp --dport 67 -j ironic-inspector-white'
    script = _ipt().changes_script(_state(white=[A]),
                                   _state(white=[B], deny_unknown=True))
    assert script.splitlines()[1:-1] == [
        '-D ironic-inspector-white -m mac --mac-source %s -j ACCEPT' % A,
        '-I ironic-inspector-white 1 -m mac --mac-source %s -j ACCEPT' % B,
        '-D ironic-inspector-black -j ACCEPT',
        '-A ironic-inspector-black -j DROP',
        '-D INPUT ' + jump, '-I INPUT 1 ' + jump]


def test_iptables_with_ip_version_6_uses_ip6tables_and_port_547():
    driver = _ipt(pxe_filter__ip_version='6')
    assert (driver.iptables, driver.port) == ('ip6tables', 547)


def test_a_chain_prefix_too_long_for_iptables_is_refused():
    with pytest.raises(ValueError, match='too long'):
        _ipt(iptables__firewall_chain='x' * 23)


# dnsmasq


def _dnsmasq(tmp_path, **overrides):
    overrides.setdefault('dnsmasq_pxe_filter__dhcp_hostsdir',
                         str(tmp_path / 'hostsdir'))
    return dnsmasq.DnsmasqDriver(_conf(**overrides), _runner())


def _files(tmp_path):
    return {p.name: p.read_text()
            for p in sorted((tmp_path / 'hostsdir').iterdir())}


def test_dnsmasq_init_leaves_only_a_wildcard_ignore(tmp_path):
    (tmp_path / 'hostsdir').mkdir()
    (tmp_path / 'hostsdir' / A).write_text(A + '\n')
    (tmp_path / 'hostsdir' / ('.%s.tmp' % B)).write_text(B + '\n')
    _dnsmasq(tmp_path).init()
    assert _files(tmp_path) == {'unknown_hosts_filter':
                                '*:*:*:*:*:*,ignore\n'}


def test_dnsmasq_open_allows_the_whitelist_and_ignores_the_blacklist(
        tmp_path):
    driver = _dnsmasq(tmp_path)
    driver.init()
    driver.apply(_state(white=[A, C], black=[B, C]))
    assert _files(tmp_path) == {A: A + '\n', B: B + ',ignore\n',
                                C: C + '\n',
                                'unknown_hosts_filter': '*:*:*:*:*:*\n'}


def test_dnsmasq_closed_means_every_file_ignores(tmp_path):
    driver = _dnsmasq(tmp_path)
    driver.init()
    driver.apply(_state(white=[A], black=[B]))
    driver.apply(_state(None, black=[B]))
    assert set(_files(tmp_path).values()) == {
        A + ',ignore\n', B + ',ignore\n', '*:*:*:*:*:*,ignore\n'}


def test_dnsmasq_rewrites_only_the_files_that_change(tmp_path):
    driver = _dnsmasq(tmp_path)
    driver.init()
    driver.apply(_state(white=[A], black=[B]))
    inodes = {p.name: p.stat().st_ino
              for p in (tmp_path / 'hostsdir').iterdir()}
    driver.apply(_state(white=[A], black=[B, C]))
    after = {p.name: p.stat().st_ino
             for p in (tmp_path / 'hostsdir').iterdir()}
    assert [n for n in after if after[n] != inodes.get(n)] == [C]


def test_a_mac_that_left_both_lists_gets_the_unknown_host_policy(tmp_path):
    driver = _dnsmasq(tmp_path)
    driver.init()
    driver.apply(_state(white=[A], black=[B]))
    driver.apply(_state(deny_unknown=True))
    assert _files(tmp_path) == {A: A + ',ignore\n', B: B + ',ignore\n',
                                'unknown_hosts_filter':
                                '*:*:*:*:*:*,ignore\n'}


def test_dnsmasq_changes_leave_the_files_a_full_rewrite_leaves(tmp_path):
    macs = ['02:00:00:00:00:%02x' % i for i in range(6)]
    rand = random.Random(15)
    changed = _dnsmasq(tmp_path / 'changes')
    rewritten = _dnsmasq(tmp_path / 'full')
    for driver in (changed, rewritten):
        driver.init()
    for _ in range(300):
        state = _state(rand.choice([None, 2.0, 2.0, 2.0]),
                       white=rand.sample(macs, rand.randint(0, 3)),
                       black=rand.sample(macs, rand.randint(0, 4)),
                       deny_unknown=rand.random() < 0.2)
        changed.apply(state)
        rewritten.applied = None
        rewritten.apply(state)
        assert _files(tmp_path / 'changes') == _files(tmp_path / 'full')


def test_a_dnsmasq_list_change_reads_and_writes_only_its_macs(
        tmp_path, monkeypatch):
    black = frozenset('02:00:00:00:%02x:%02x' % (i // 256, i % 256)
                      for i in range(1000))
    driver = _dnsmasq(tmp_path)
    driver.init()
    driver.apply(_state(black=black))
    written, checked = [], []
    monkeypatch.setattr(dnsmasq, '_write', lambda fd, name, text:
                        written.append(name))
    real_policy = dnsmasq._policy
    monkeypatch.setattr(dnsmasq, '_policy', lambda state, mac: (
        checked.append(mac), real_policy(state, mac))[1])
    driver.apply(_state(white=[A], black=black))
    assert (written, checked) == ([A], [A])


def test_dnsmasq_writes_denials_before_permissions_wildcard_first():
    written = {A: dnsmasq.IGNORE, B: dnsmasq.ALLOW}
    wanted = {A: dnsmasq.ALLOW, B: dnsmasq.IGNORE, C: dnsmasq.IGNORE,
              dnsmasq.WILDCARD: dnsmasq.ALLOW}
    assert dnsmasq.changes(written, wanted) == [
        (B, 'ignore'), (C, 'ignore'), ('unknown_hosts_filter', 'allow'),
        (A, 'allow')]
    wanted[dnsmasq.WILDCARD] = dnsmasq.IGNORE
    assert dnsmasq.changes(written, wanted)[0] == (
        'unknown_hosts_filter', 'ignore')


def test_dnsmasq_without_purge_rereads_the_directory(tmp_path):
    _dnsmasq(tmp_path).init()
    first = _dnsmasq(tmp_path)
    first.apply(_state(white=[A], black=[B]))
    second = _dnsmasq(tmp_path,
                      dnsmasq_pxe_filter__purge_dhcp_hostsdir=False)
    second.init()
    assert second.written == {A: 'ignore', B: 'ignore',
                              'unknown_hosts_filter': 'ignore'}
    assert set(_files(tmp_path)) == {A, B, 'unknown_hosts_filter'}


def test_dnsmasq_block_works_without_init_and_runs_the_stop_command(
        tmp_path):
    (tmp_path / 'hostsdir').mkdir()
    (tmp_path / 'hostsdir' / A).write_text(A + '\n')
    stopped = tmp_path / 'stopped'
    driver = _dnsmasq(tmp_path, dnsmasq_pxe_filter__dnsmasq_stop_command=(
        'touch %s' % stopped))
    driver.block()
    assert _files(tmp_path) == {A: A + ',ignore\n', 'unknown_hosts_filter':
                                '*:*:*:*:*:*,ignore\n'}
    assert stopped.exists()


def test_dnsmasq_block_creates_a_missing_hostsdir(tmp_path):
    _dnsmasq(tmp_path).block()
    assert _files(tmp_path) == {'unknown_hosts_filter':
                                '*:*:*:*:*:*,ignore\n'}


def test_dnsmasq_runs_the_start_command_once_set_up(tmp_path):
    started = tmp_path / 'started'
    driver = _dnsmasq(tmp_path, dnsmasq_pxe_filter__dnsmasq_start_command=(
        'test -e %s/unknown_hosts_filter && touch %s'
        % (tmp_path / 'hostsdir', started)))
    driver.init()
    assert started.exists()


# infiniband


def _sysfs(tmp_path, interface, text):
    path = tmp_path / 'class' / 'net' / interface / 'eth'
    path.mkdir(parents=True)
    (path / 'neighs').write_text(text)


def test_an_eoib_port_is_filtered_by_the_emac_of_its_guid(tmp_path):
    guid = '7c:fe:90:03:00:29:26:52'
    _sysfs(tmp_path, 'eoib0', 'EMAC=02:00:02:97:00:01 IMAC=97:fe:80:00:00'
           ':00:00:00:00:%s\nEMAC=02:00:02:97:00:02 IMAC=97:fe:80:00:00:00'
           ':00:00:00:7c:fe:90:03:00:29:26:53\n' % guid)
    ports = [{'address': A, 'extra': {'client-id': 'ff:00:00:00:00:00:02'
                                      ':00:00:02:c9:00:' + guid.upper()}},
             {'address': B, 'extra': {}},
             {'address': C, 'extra': {'client-id': 'no:such:guid'}}]
    assert infiniband.macs_for_ports(ports, ['eoib0', 'missing'],
                                     sysfs_root=tmp_path) == [
        '02:00:02:97:00:01', B, C]
