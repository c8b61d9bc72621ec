"""The site benchmark's results as Markdown (``benchmarks/site.py``)."""

from oslo_config import cfg

import measure
import report
from inspector_ha import conf as conf_mod

#: Issue 15's limits at a site: the syncs' cost to Ironic, as a share of
#: one core; F4's bound on black-listing a new port everywhere.
SYNC_IRONIC_PCT = 5.0
NEW_PORT_S = 1.0


def periods():
    """The periodic Ironic listings at the defaults of the code imported
    (a release before the shared lister, through PYTHONPATH, included)."""
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='inspector-ha', default_config_files=[])
    pxe = conf.pxe_filter
    if 'blacklist_list_period' in pxe:
        black = ('the whole black-list every %g s (elected, announced; '
                 'each member lists Ironic itself every %g s only while '
                 'none comes)' % (pxe.blacklist_list_period,
                                  pxe.sync_period))
    else:
        black = 'a full black-list sync every %g s (every worker)' % (
            pxe.sync_period)
    return ('the Ironic sync every %d s (elected), %s, the port watcher '
            'every %g s (elected)' % (conf.periodic.ironic_sync_period, black,
                                      pxe.port_watch_period))


def _steady_lines(steady):
    lines = ['', '## Steady: nothing but the periodic work, %.0f s' %
             steady['seconds'], '',
             'Ironic, beyond what it uses alone: **%.2f%% of one core**.'
             % steady['ironic_cpu_pct_of_one_core'], '']
    lines += report.table(['process', '% of one core'], sorted(
        steady['cpu_pct_of_one_core'].items(), key=lambda kv: -kv[1]))
    lines += ['', "Ironic's calls (its request log):", '']
    lines += report.table(
        ['call', 'per minute', 'Ironic handling s per minute', 'mean ms'],
        [(c['call'], c['per_minute'], c['handling_s_per_minute'],
          c['mean_ms']) for c in steady['ironic_calls']])
    return lines


def _batch_lines(batch):
    return ['', '## A batch while the syncs run', '',
            report.batch_line('site', batch) + ' (%s net of the CPU the '
            'service used idle just before the batch); Ironic CPU %.1f '
            'ms/node' % (batch['cpu_ms_per_node_net_of_idle'][
                measure.OWN_TOTAL],
                batch['cpu_ms_per_node'][measure.IRONIC_TOTAL])]


def _targets(site):
    batch = site.get('batch') or {}
    rows = [
        ('the syncs cost Ironic, % of one core', '< %s' % SYNC_IRONIC_PCT,
         site['steady']['ironic_cpu_pct_of_one_core'],
         site['steady']['ironic_cpu_pct_of_one_core'] < SYNC_IRONIC_PCT),
        ('a new port black-listed on every host, s (worst)',
         '< %s' % NEW_PORT_S, max(site['new_port_blacklisted_everywhere_s']),
         max(site['new_port_blacklisted_everywhere_s']) < NEW_PORT_S)]
    if batch:
        stuck = report.stuck(batch)
        rows.append(('batch: stuck', '== 0', stuck, stuck == 0))
    return [(name, limit, value, 'yes' if ok else 'NO')
            for name, limit, value, ok in rows]


def text(results):
    meta, site = results['meta'], results['site']
    lines = ['# inspector-ha at a site of %d nodes and %d ports, %s' % (
        meta['nodes_in_ironic'], meta['ports_in_ironic'], meta['date']),
        '', 'Command: `%s`' % meta['command'], '',
        'Code %s; Ironic %s (one process, SQLite, fake-hardware%s). One API '
        'and 3 workers, each worker managing the nftables PXE filter of '
        'its own host (a network namespace); PostgreSQL, RabbitMQ, Redis; '
        'the default periods: %s.' % (
            meta['commit'], meta['ironic_version'],
            '; its power-state sync off' if meta.get('ironic_power_sync_off')
            else '', meta['periods']), '',
        '- Ironic alone (its own periodic work): %.2f%% of one core.' %
        site['ironic_alone_pct_of_one_core'],
        '- From the cluster\'s start until every host had black-listed '
        'the whole site: %.1f s.' % site['first_blacklist_s'],
        '- A new Ironic port black-listed on every host after: %s s.' %
        ', '.join('%.2f' % t for t in
                  site['new_port_blacklisted_everywhere_s'])]
    lines += ['', '## Targets', '']
    lines += report.table(['target', 'limit', 'measured', 'met'],
                          _targets(site))
    lines += _steady_lines(site['steady'])
    if site.get('batch'):
        lines += _batch_lines(site['batch'])
    return '\n'.join(lines) + '\n'
