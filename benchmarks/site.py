"""Benchmark: the site the design is for (issue 15 step 5): 10,000 nodes
and 20,000 ports in Ironic, a split cluster of 3 workers each managing
the nftables PXE filter of its own host (network namespaces) and one
API. Measures what the periodic Ironic sync, the black-list syncs and
the port watcher cost Ironic and the service, how fast a new port is
black-listed on every host (guarantee F4), and a batch of
introspections while it all runs.

    .venv/bin/python benchmarks/site.py [--nodes N] [--ports-per-node P]
                                        [--window S] [--steady-after S]
                                        [--batch B] [--out FILE]

Ironic (all-in-one, SQLite) starts from a copy of a site database built
once and kept in ``--cache`` (not measured: one node and its ports are
created through Ironic's API, then copied row by row in SQL). Needs root
(network namespaces, nftables) and what the functional tests need. Not a
test: nothing passes or fails.
"""

import argparse
import json
import pathlib
import shlex
import sys
import tempfile
import time

import batches
import ironic_log
import measure
import run
import site_ironic
import site_report
import testpath  # noqa: F401  (tests/functional on sys.path)
import backends
import ironic_server
import firewalled

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'
#: Ironic's own power-state sync walks every node every 120 s: at 10,000
#: fake-hardware nodes a burst of about 60 s of CPU each time (about half
#: a core on average), the same whatever inspects them. It is turned off
#: so that what is measured is what the service adds.
IRONIC_SITE_CONF = """
[conductor]
sync_power_state_interval = 0
"""


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--nodes', type=int, default=10000,
                        help='nodes in Ironic (10000)')
    parser.add_argument('--ports-per-node', type=int, default=2,
                        help='ports of each node (2)')
    parser.add_argument('--window', type=float, default=600.0,
                        help='seconds the steady costs are measured over '
                             '(600: one period of the longest periodic '
                             'listing at the defaults)')
    parser.add_argument('--steady-after', type=float, default=0.0,
                        help='seconds to wait after the site is '
                             'black-listed everywhere before the steady '
                             'window (0; the members\' own first listings '
                             'may still be paging through Ironic then)')
    parser.add_argument('--batch', type=int, default=200,
                        help='introspections run while the syncs run, '
                             'all at once (200; 0 for none)')
    parser.add_argument('--settle', type=float, default=0.0,
                        help='seconds the cluster settles before its idle '
                             'CPU is measured (0)')
    parser.add_argument('--ports-added', type=int, default=5,
                        help='new ports timed until black-listed on '
                             'every host (5)')
    batches.add_post_size_option(parser)
    parser.add_argument('--cache', type=pathlib.Path,
                        default=site_ironic.CACHE,
                        help='where the site database is kept between '
                             'runs (%(default)s)')
    parser.add_argument('--out', type=pathlib.Path,
                        help='JSON results file (default benchmarks/'
                             'results/<date>-site-<nodes>.json; the summary '
                             'goes next to it as .md)')
    args = parser.parse_args(argv)
    # NOTE: what batches.run reads of a side-by-side run's options.
    args.concurrency = args.batch
    args.poll_interval, args.timeout = 1.0, 120.0 + args.batch
    args.idle, args.profile_dir = 5.0, None
    return args


def _ironic_cpu_s(cpu):
    return sum(v for k, v in cpu.items()
               if k.startswith(measure.IRONIC_GROUP))


def _service_groups(setup):
    the_cluster = setup.cluster
    return [measure.CpuGroup(
        'inspector-ha %s' % p.name,
        lambda p=p: measure.tree(p.pid))
        for p in the_cluster.apis + the_cluster.workers]


def _calls_per_minute(window, seconds):
    calls = ironic_log.analyse(window.calls(), 1)
    return [dict(call=c['call'], per_minute=round(c['calls'] * 60 /
                                                  seconds, 1),
                 handling_s_per_minute=round(c['total_s'] * 60 / seconds,
                                             2), mean_ms=c['mean_ms'])
            for c in calls['by_call']]


def steady(ironic, setup, seconds, idle_ironic_s):
    """Costs over ``seconds`` with nothing but the periodic work."""
    groups = batches.ironic_groups(ironic) + _service_groups(setup)
    window = ironic_log.Window(ironic.log_path).start()
    cpu = batches.measure_idle(groups, 0, seconds)
    window.stop()
    ironic_s = _ironic_cpu_s(cpu) - idle_ironic_s * seconds
    return {
        'seconds': seconds,
        'ironic_cpu_pct_of_one_core': round(100 * ironic_s / seconds, 2),
        'cpu_pct_of_one_core': {
            k: round(100 * v / seconds, 2) for k, v in cpu.items()
            if not k.startswith('_')},
        'ironic_calls': _calls_per_minute(window, seconds),
    }


def freshness(setup, count):
    """Seconds from a port's creation in Ironic until every host has it
    black-listed."""
    return [round(firewalled.blacklisted_everywhere(
        setup, *firewalled.add_port(setup), 30), 2) for _ in range(count)]


def batch_during(ironic, setup, args):
    nodes = batches.create_nodes(ironic, args.batch,
                                 real_size=batches.real_size(args))
    setup.nodes.extend(nodes)
    return batches.run(batches.cluster_deployment(setup.cluster, 'site'),
                       ironic, nodes, args)


def _wait_blacklisted(setup, last_mac, began):
    """Seconds from ``began`` until every host black-lists the site's
    last port (the first full listings are done)."""
    backends.wait_for(lambda: all(firewalled.blacklisted(h, last_mac)
                                  for h in setup.lab.hosts), 900,
                      interval=1.0, message='the site is not black-listed')
    return round(time.monotonic() - began, 1)


def _measure(ironic, workdir, args):
    idle = batches.measure_idle(batches.ironic_groups(ironic), 0, 20)
    idle_ironic_s = _ironic_cpu_s(idle) / idle['_wall_seconds']
    batches.log('Ironic alone: %.1f%% of one core' % (100 * idle_ironic_s))
    with batches.fresh_backends() as (database, transport, coordination):
        began = time.monotonic()
        setup = firewalled.Firewalled(workdir, ironic, transport, database,
                                      coordination)
        return _measure_site(ironic, setup, began, idle_ironic_s, args)


def _measure_site(ironic, setup, began, idle_ironic_s, args):
    try:
        result = {'ironic_alone_pct_of_one_core': round(
            100 * idle_ironic_s, 2)}
        result['first_blacklist_s'] = _wait_blacklisted(
            setup, site_ironic.mac(args.nodes * args.ports_per_node - 1),
            began)
        batches.log('every host black-listed the site after %.1f s' %
                    result['first_blacklist_s'])
        time.sleep(args.steady_after)
        result['steady'] = steady(ironic, setup, args.window, idle_ironic_s)
        batches.log('steady: Ironic +%.1f%% of one core' %
                    result['steady']['ironic_cpu_pct_of_one_core'])
        result['new_port_blacklisted_everywhere_s'] = freshness(
            setup, args.ports_added)
        if args.batch:
            result['batch'] = batch_during(ironic, setup, args)
    finally:
        setup.close()
    return result


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    seed = site_ironic.site_database(args.nodes, args.ports_per_node,
                                     args.cache)
    results = {'meta': _meta(args, argv)}
    with tempfile.TemporaryDirectory(prefix='inspector-ha-site-') as tmp:
        with ironic_server.Ironic(seed_database=seed,
                             extra_conf=IRONIC_SITE_CONF) as ironic:
            results['site'] = _measure(ironic, pathlib.Path(tmp), args)
    out = args.out or RESULTS / ('%s-site-%d.json' % (
        time.strftime('%Y-%m-%d'), args.nodes))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + '\n')
    md = out.with_suffix('.md')
    md.write_text(site_report.text(results))
    print(md.read_text())
    print('Results: %s and %s' % (out, md))
    return 0


def _meta(args, argv):
    return {'date': time.strftime('%Y-%m-%d %H:%M:%S %Z'),
            'command': '.venv/bin/python benchmarks/site.py ' +
                       ' '.join(shlex.quote(a) for a in argv),
            'commit': run.code_under_test(),
            'ironic_version': run.ironic_version(),
            'nodes_in_ironic': args.nodes,
            'ports_in_ironic': args.nodes * args.ports_per_node,
            'window_s': args.window, 'steady_after_s': args.steady_after,
            'batch': args.batch,
            'periods': site_report.periods(),
            'ironic_power_sync_off': True}


if __name__ == '__main__':
    sys.exit(main())
