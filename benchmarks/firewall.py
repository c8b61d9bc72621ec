"""Benchmark of the PXE filter drivers: how long a full rebuild with a
large black-list and white-list takes, and an incremental change.

    .venv/bin/python benchmarks/firewall.py [--black N] [--white N]
                                            [--runs R]

Each run uses a fresh network namespace with dnsmasq running in it
(``tests/functional/netns.py``; needs root).  Per driver it prints the
median over the runs, in ms, of:

- first open: the first ``apply`` of the open state after ``init()``
  (nftables and iptables: as changes to the closed, empty filter);
- full rebuild: the whole filter written from nothing known (what
  ``apply`` does after ``block`` or a failure; iptables includes its
  INPUT-jump check; dnsmasq rewrites every file);
- one MAC: one black-listed MAC moved to the white-list;
- renew: re-arming the lease (nftables only);
- block: ``block()`` of the open filter;
- dnsmasq read: from the start of the apply until dnsmasq logged
  reading the last file written (the greatest white-listed MAC).

Not a test: nothing passes or fails.
"""

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import testpath  # noqa: F401  (puts tests/functional on sys.path)
import backends
import netns

from inspector_ha.firewall import base

DRIVERS = ('nftables', 'iptables', 'dnsmasq')


def _macs(first_byte, count):
    return frozenset('%02x:00:%02x:%02x:%02x:01' % (
        first_byte, i >> 16 & 255, i >> 8 & 255, i & 255)
        for i in range(count))


def _timed(call, *args):
    start = time.perf_counter()
    call(*args)
    return (time.perf_counter() - start) * 1000


def _dnsmasq_read(host, started, last, writes, timeout=300):
    """ms from ``started`` until dnsmasq read the file ``last`` for the
    ``writes``-th time."""
    needle = 'read %s/%s\n' % (host.hostsdir, last)
    backends.wait_for(lambda: host.log_text().count(needle) >= writes,
                      timeout, message='dnsmasq did not read it all')
    return (time.perf_counter() - started) * 1000


def _forget(driver):
    """Make the next apply rebuild everything."""
    driver.applied = None
    if hasattr(driver, 'written'):  # dnsmasq: rewrite every file
        driver.written = {}


def _one_run(name, state, workdir):
    lab = netns.Lab(workdir, hosts=1)
    host = lab.hosts[0]
    try:
        driver = base.load(netns.filter_conf(name, host))
        driver.init()
        last = max(state.whitelist)  # dnsmasq: the last file written
        started = time.perf_counter()
        times = {'first open': _timed(driver.apply, state)}
        if name == 'dnsmasq':
            times['dnsmasq read (first open)'] = _dnsmasq_read(
                host, started, last, 1)
        _forget(driver)
        started = time.perf_counter()
        times['full rebuild'] = _timed(driver.apply, state)
        if name == 'dnsmasq':
            times['dnsmasq read (rebuild)'] = _dnsmasq_read(
                host, started, last, 2)
        moved = sorted(state.blacklist)[0]
        times['one MAC'] = _timed(driver.apply, state._replace(
            whitelist=state.whitelist | {moved},
            blacklist=state.blacklist - {moved}))
        if driver.leased:
            times['renew'] = _timed(driver.renew, state.open_for)
        times['block'] = _timed(driver.block)
        return times
    finally:
        lab.close()


def _versions():
    commands = (['nft', '--version'], ['iptables', '--version'],
                ['dnsmasq', '--version'])
    return [subprocess.run(c, capture_output=True, text=True)
            .stdout.splitlines()[0] for c in commands]


def measure(name, state, runs):
    """``{what: [ms per run]}`` for driver ``name``."""
    results = {}
    for run in range(runs):
        with tempfile.TemporaryDirectory() as workdir:
            for what, ms in _one_run(name, state, workdir).items():
                results.setdefault(what, []).append(ms)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--black', type=int, default=10000)
    parser.add_argument('--white', type=int, default=2000)
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--drivers', default=','.join(DRIVERS))
    args = parser.parse_args(argv)
    netns.check_available()
    state = base.State(30.0, _macs(6, args.white), _macs(2, args.black),
                       False)
    print('PXE filter drivers: %d black-listed + %d white-listed MACs, '
          'median of %d runs, ms (min-max)' % (args.black, args.white,
                                               args.runs))
    print('%s; %d cores, load %s; kernel %s; %s' % (
        time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()),
        os.cpu_count(), ' '.join('%.2f' % x for x in os.getloadavg()),
        platform.release(), '; '.join(_versions())))
    for name in args.drivers.split(','):
        for what, values in measure(name, state, args.runs).items():
            print('%-9s %-26s %9.1f  (%.1f-%.1f)' % (
                name, what, statistics.median(values), min(values),
                max(values)))
        sys.stdout.flush()


if __name__ == '__main__':
    main()
