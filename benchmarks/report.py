"""The targets next to the measured values, the ratios to
ironic-inspector 12.5 measured in the same run, where the time goes; as
text (printed and written as Markdown) and JSON."""

import json
import os

import measure

#: The cores the machine has (the report's ceilings).
CORES = os.cpu_count() or 1
#: ironic-inspector 12.5's throughput on the same Ironic when a run
#: leaves it out (``--skip upstream``), measured for issue 6.
UPSTREAM_NODES_PER_S = 3.5
#: How many times 12.5's throughput each Ironic layout is to give:
#: where one Ironic process is the ceiling, and where it is not.
THROUGHPUT_FACTOR = {'all-in-one': 1.5, 'split': 2}
#: What each Ironic layout (``benchmarks/run.py --ironic``) is.
IRONIC_LAYOUTS = {
    'all-in-one': 'one process, SQLite, fake-hardware',
    'split': 'ironic-api with {api} workers and ironic-conductor with a '
             'pool of {pool} threads over JSON-RPC, MariaDB (each Ironic '
             'process keeping {db_pool} connections), fake-hardware',
}
#: What is compared with 12.5: (label, path in a result, lower is better).
VERSUS_UPSTREAM = (
    ('throughput, nodes/s', ('nodes_per_s',), False),
    ('Ironic calls per node', ('ironic', 'calls_per_node'), True),
    ('Ironic CPU per node, ms', ('cpu_ms_per_node', measure.IRONIC_TOTAL),
     True),
    ('the service\'s own CPU per node, ms',
     ('cpu_ms_per_node', measure.OWN_TOTAL), True),
    ('start p99, ms', ('start', 'p99_ms'), True),
    ('continue p99, ms', ('continue', 'p99_ms'), True),
)


def _get(result, *path):
    for key in path:
        if result is None:
            return None
        result = result.get(key)
    return result


def _refused(result):
    return sum(_get(result, *p) or 0 for p in (
        ('start', 'refused'), ('continue', 'refused'),
        ('burst', 'start', 'refused'), ('burst', 'continue', 'refused')))


def stuck(result):
    return ((_get(result, 'outcome', 'stuck') or 0) +
            (_get(result, 'burst', 'outcome', 'stuck') or 0) +
            (result.get('not_started') or 0))


def _own_rss(result):
    values = [m['peak_rss_mb'] for name, m in result['memory'].items()
              if not name.startswith(measure.IRONIC_GROUP) and
              m['peak_rss_mb']]
    return max(values, default=None)


def _upstream_rate(results):
    """12.5's nodes/s measured in this run, else the recorded figure."""
    return _get(results, 'upstream', 'nodes_per_s') or UPSTREAM_NODES_PER_S


def versus_upstream(results):
    """Rows: figure, 12.5, split, split/12.5, embedded, embedded/12.5."""
    base = results.get('upstream')
    if not base:
        return []
    rows = []
    for label, path, _lower in VERSUS_UPSTREAM:
        row = [label, _get(base, *path)]
        for name in ('split', 'embedded'):
            value = _get(results.get(name), *path)
            row += [value, _ratio(value, row[1])]
        rows.append(row)
    return rows


def _ratio(value, base):
    return round(value / base, 2) if value and base else None


#: Own CPU per introspection (issue 15): the split cluster's limit; the
#: embedded default's is in the row's name and not judged in "met".
OWN_CPU_MS = {'split': 25, 'embedded': 15}


def _batch_targets(result, upstream_rate=UPSTREAM_NODES_PER_S, factor=1.5):
    """(target, comparison, limit, value) rows of one batch; ``factor``
    is how many times 12.5's throughput it is to reach."""
    own = 'own CPU per introspection, ms (embedded: <= %d)' % \
        OWN_CPU_MS['embedded']
    return [
        ('Ironic calls per node', '<=', 7,
         _get(result, 'ironic', 'calls_per_node')),
        (own, '<=', OWN_CPU_MS['split'],
         _get(result, 'cpu_ms_per_node', measure.OWN_TOTAL)),
        (own + ', net of idle CPU', '<=', OWN_CPU_MS['split'],
         _get(result, 'cpu_ms_per_node_net_of_idle', measure.OWN_TOTAL)),
        ('API CPU per status read, ms', '<=', 2,
         result.get('status_read_cpu_ms')),
        ('throughput, nodes/s (%s x 12.5\'s %.2f)' % (factor, upstream_rate),
         '>=', round(factor * upstream_rate, 2), result.get('nodes_per_s')),
        ('start p99, ms, %d concurrent' % result['concurrency'], '<=',
         500, _get(result, 'start', 'p99_ms')),
        ('continue p99, ms, as nodes power on', '<=', 500,
         _get(result, 'continue', 'p99_ms')),
        ('continue p99, ms, %s posting at once' % _get(
            result, 'burst', 'posted_at_once'), '<=', 500,
         _get(result, 'burst', 'continue', 'p99_ms')),
        ('stuck (never finished or error)', '==', 0, stuck(result)),
        ('refused connections', '==', 0, _refused(result)),
        ('peak RSS per process, MB', '<=', 150, _own_rss(result)),
    ]


def _met(comparison, limit, value):
    if value is None:
        return 'n/a'
    ok = {'<=': value <= limit, '>=': value >= limit,
          '==': value == limit}[comparison]
    return 'yes' if ok else 'NO'


def targets(results):
    """Rows: target, split value, embedded value, met (split)."""
    rate = _upstream_rate(results)
    factor = THROUGHPUT_FACTOR[results['meta'].get('ironic_layout',
                                                   'all-in-one')]
    split = _batch_targets(results['split'], rate, factor)
    embedded = _batch_targets(results['embedded'], rate, factor) \
        if results.get('embedded') else [(None,) * 4] * len(split)
    rows = [(name, '%s %s' % (cmp_, limit), value, other[3],
             _met(cmp_, limit, value))
            for (name, cmp_, limit, value), other in zip(split, embedded)]
    fo = results.get('failover') or {}
    for name, key, limit in (
            ('worker SIGKILL -> its requests redelivered and done, s',
             'worker_kill_to_redelivered_done_s', 5),
            ('leader SIGKILL -> new leader, s',
             'leader_kill_to_new_leader_s', 3)):
        value = _get(fo, key, 'max')
        rows.append((name + ' (worst trial)', '<= %s' % limit, value,
                     None, _met('<=', limit, value)))
    return rows


def ratios(results):
    split, emb = results['split'], results.get('embedded')
    if not emb:
        return {}
    pairs = {'nodes/s': ('nodes_per_s',),
             'start p99': ('start', 'p99_ms'),
             'continue p99 (as nodes power on)': ('continue', 'p99_ms'),
             'continue p99 (burst)': ('burst', 'continue', 'p99_ms')}
    out = {}
    for name, path in pairs.items():
        a, b = _get(split, *path), _get(emb, *path)
        out[name] = round(a / b, 2) if a and b else None
    return out


def table(header, rows):
    lines = ['| ' + ' | '.join(header) + ' |',
             '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join('' if c is None else str(c) for c in row)
              + ' |' for row in rows]
    return lines


def _cpu_rows(result):
    cpu, idle = result['cpu_s'], result['idle_cpu_s']
    wall, idle_wall = cpu['_wall_seconds'], idle['_wall_seconds']
    per_node = result['cpu_ms_per_node']
    totals = (measure.MACHINE, measure.OWN_TOTAL, measure.IRONIC_TOTAL)
    groups = sorted((k for k in cpu if not k.startswith('_') and k not in
                     totals), key=lambda k: -cpu[k])
    other = cpu[measure.MACHINE] - sum(cpu[k] for k in groups)
    rows = [(k, cpu[k], per_node[k], '%.0f%%' % (100.0 * cpu[k] / wall),
             '%.0f%%' % (100.0 * idle[k] / idle_wall)) for k in groups]
    for total in (measure.OWN_TOTAL, measure.IRONIC_TOTAL):
        rows.append(('= ' + total, cpu[total], per_node[total],
                     '%.0f%%' % (100.0 * cpu[total] / wall),
                     '%.0f%%' % (100.0 * idle[total] / idle_wall)))
    rows.append(('other processes on the machine', round(other, 2),
                 round(other / result['nodes'] * 1000, 1),
                 '%.0f%%' % (100.0 * other / wall), ''))
    rows.append(('machine total', cpu[measure.MACHINE],
                 per_node[measure.MACHINE],
                 '%.0f%%' % (100.0 * cpu[measure.MACHINE] / wall),
                 '%.0f%%' % (100.0 * idle[measure.MACHINE] / idle_wall)))
    return rows


def _where_time_goes(name, result):
    wall = result['cpu_s']['_wall_seconds']
    lines = ['', '### Where the time goes: %s' % name, '',
             'CPU over the batch (%.0f s wall; 2 cores = 200%%). The idle '
             'column is the same processes over %.0f s before the batch '
             '(a periodic task that falls in or out of that window moves '
             'it; the "net of idle" figures inherit that). '
             'PostgreSQL, RabbitMQ and Redis are shared with anything else '
             'using them.' % (wall, result['idle_cpu_s']['_wall_seconds']),
             '']
    lines += table(['process group', 'CPU s', 'ms/node',
                     '% of one core', 'idle % of one core'],
                    _cpu_rows(result))
    ironic_ms = result['cpu_ms_per_node'][measure.IRONIC_TOTAL]
    busiest = max((k for k in result['cpu_s']
                   if k.startswith(measure.IRONIC_GROUP)),
                  key=lambda k: result['cpu_s'][k], default=None)
    if ironic_ms and busiest:
        busiest_ms = result['cpu_ms_per_node'][busiest]
        own_ms = result['cpu_ms_per_node'][measure.OWN_TOTAL]
        lines += ['', 'Ironic used %.0f ms of CPU per node; its busiest '
                  'process, `%s`, %.0f ms, running at %.0f%% of one core. '
                  'One Python process uses at most one core, so at this '
                  'cost that process serves at most about %.1f nodes/s; '
                  'Ironic and the service together (%.0f ms per node) at '
                  'most about %.1f on this machine\'s %d cores.' % (
                      ironic_ms, busiest, busiest_ms,
                      100.0 * result['cpu_s'][busiest] / wall,
                      1000.0 / busiest_ms, ironic_ms + own_ms,
                      1000.0 * CORES / (ironic_ms + own_ms), CORES)]
    ironic = result['ironic']
    lines += ['', 'Ironic: %s calls/node; sum of its request durations '
              '%.1f s (requests overlap).'
              % (ironic['calls_per_node'], ironic['handling_s']), '']
    lines += table(['Ironic call', 'per node', 'total s', 'mean ms'],
                    [(c['call'], c['per_node'], c['total_s'], c['mean_ms'])
                     for c in ironic['by_call'][:10]])
    lines += _profile_lines(result)
    stages = result.get('ledger', {}).get('stages', {})
    if not stages:
        return lines
    lines += ['', 'Inside inspector-ha (from its SQL ledger):', '']
    lines += table(['stage', 'p50 ms', 'p99 ms', 'mean ms'],
                    [(k, v['p50_ms'], v['p99_ms'], v['mean_ms'])
                     for k, v in stages.items()])
    return lines


def _profile_lines(result):
    """py-spy's view of each sampled process, and the cost of one status
    read."""
    lines = ['', 'One status read (`GET /v1/introspection/<uuid>`, after '
             'the batch, one at a time) costs the API %s ms of CPU.'
             % result.get('status_read_cpu_ms')]
    database = result.get('database_per_node')
    if database:
        lines += ['', 'PostgreSQL per introspection over the batch (status '
                  'reads included; `pg_stat_database`): ' + ', '.join(
                      '%s %s' % kv for kv in database.items()) + '.']
    for name, found in sorted((result.get('profile') or {}).items()):
        lines += ['', 'Sampled profile of `%s` over the batch (py-spy): %s'
                  % (name, found.get('error') or _samples(found))]
        if found.get('error') or not found.get('working'):
            continue
        for title, key in (('library on the stack', 'libraries'),
                           ('inspector_ha function, inclusive',
                            'inclusive'),
                           ('leaf function (self)', 'self')):
            lines += [''] + table([title, '% of working samples'],
                                   found[key])
    return lines


def _samples(found):
    return ('%d samples, %d working (the rest wait on a lock, a socket or '
            'a sleep); shares are of the working ones' % (
                found['samples'], found.get('working', 0)))


def batch_line(name, r):
    return ('%s: %d nodes, %d concurrent: %.1f s, %.2f nodes/s; start '
            'p50/p99 %s/%s ms; continue p50/p99 %s/%s ms, answers %s, '
            'failed attempts %s (burst %s/%s ms);'
            ' outcome %s; Ironic %.2f calls/node; own CPU %s ms/node' % (
                name, r['nodes'], r['concurrency'], r['elapsed_s'],
                r['nodes_per_s'], r['start']['p50_ms'], r['start']['p99_ms'],
                r['continue']['p50_ms'], r['continue']['p99_ms'],
                r['continue']['codes'], r['continue']['failures'],
                _get(r, 'burst', 'continue', 'p50_ms'),
                _get(r, 'burst', 'continue', 'p99_ms'),
                {k: v for k, v in r['outcome'].items()
                 if k != 'error_samples'},
                r['ironic']['calls_per_node'],
                r['cpu_ms_per_node'][measure.OWN_TOTAL]))


def text(results):
    meta = results['meta']
    lines = ['# inspector-ha benchmark, %s' % meta['date'], '',
             'Command: `%s`' % meta['command'], '',
             'Machine: %s cores, load average at start %s; code %s; '
             'Ironic %s (%s).' % (
                 meta['cores'], meta['loadavg'], meta['commit'],
                 meta['ironic_version'],
                 meta.get('ironic_layout_text',
                          IRONIC_LAYOUTS['all-in-one'])), '']
    for name in ('upstream', 'split', 'embedded'):
        if results.get(name):
            lines.append('- ' + batch_line(name, results[name]))
    rows = versus_upstream(results)
    if rows:
        lines += ['', '## Against ironic-inspector 12.5, same run, same '
                  'Ironic', '']
        lines += table(['figure', '12.5', 'split', 'split / 12.5',
                         'embedded', 'embedded / 12.5'], rows)
    lines += ['', '## Targets', '']
    lines += table(['target', 'limit', 'split cluster', 'embedded',
                     'met (split)'], targets(results))
    lines += ['', 'Ratio split / embedded: %s' % ', '.join(
        '%s %s' % kv for kv in ratios(results).items()), '']
    fo = results.get('failover')
    if fo:
        lines += ['Worker kill trials: %s' % json.dumps(
            fo['worker_trials']), '',
            'Leader kill trials: %s' % json.dumps(fo['leader_trials']), '']
    for name in ('upstream', 'split', 'embedded'):
        if results.get(name):
            lines += _where_time_goes(name, results[name])
    return '\n'.join(lines) + '\n'


def write(results, json_path):
    results = dict(results, targets=targets(results),
                   ratio_split_over_embedded=ratios(results),
                   versus_upstream=versus_upstream(results))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(results, indent=1, default=str) + '\n')
    md_path = json_path.with_suffix('.md')
    md_path.write_text(text(results))
    return md_path
