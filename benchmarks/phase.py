"""One phase of ``benchmarks/run.py`` alone, for analysis: the same
batch on a fresh Ironic, without 12.5 and so without a ratio (compare
such runs back to back)::

    [OS_WORKER__POOL_SIZE=4 ...] .venv/bin/python benchmarks/phase.py \\
        {upstream,split,embedded} --out FILE [run.py's options]

Settings in the environment (oslo.config's ``OS_<GROUP>__<OPTION>``)
reach every process the phase starts, the service's and also Ironic's
and 12.5's, and override their configuration files; the results name
them in ``meta.environment`` and in the command (the ``deployment`` line
describes the configuration files only). py-spy sampling and the
failover trials are not part of a phase.
"""

import json
import sys
import tempfile

import measure
import run


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in run.BATCH_PHASES:
        sys.exit('usage: phase.py {%s} --out FILE [run.py\'s options]'
                 % ','.join(run.BATCH_PHASES))
    args = run.parse(argv[1:])
    if args.out is None:
        sys.exit('phase.py: --out FILE is needed')
    args.profile_dir = None
    with tempfile.TemporaryDirectory(prefix='inspector-ha-bench-') as tmp:
        result = run.phase(argv[0], run.BATCH_PHASES[argv[0]], tmp, args)
    result['meta'] = run.meta(args, argv, script='phase.py')
    args.out.write_text(json.dumps(result, indent=1) + '\n')
    print('%s: %.1f s, %.2f nodes/s, Ironic %.0f ms and the service %.1f '
          'ms of CPU per node, %s' % (
              argv[0], result['elapsed_s'], result['nodes_per_s'],
              result['cpu_ms_per_node'][measure.IRONIC_TOTAL],
              result['cpu_ms_per_node'][measure.OWN_TOTAL],
              result['outcome']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
