"""One phase of ``benchmarks/run.py`` alone, for analysis: the same
batch on a fresh Ironic, without 12.5 and so without a ratio (compare
such runs back to back)::

    [OS_WORKER__POOL_SIZE=4 ...] .venv/bin/python benchmarks/phase.py \\
        {upstream,split,embedded} --out FILE [run.py's options]

Settings in the environment (oslo.config's ``OS_<GROUP>__<OPTION>``)
reach the embedded default and the split cluster's processes; the
command written to the results names them.
"""

import json
import os
import shlex
import sys
import tempfile

import batches
import run

PHASES = {'upstream': batches.run_upstream, 'split': batches.run_split,
          'embedded': batches.run_embedded}


def _command(argv):
    settings = ['%s=%s' % (k, shlex.quote(v))
                for k, v in sorted(os.environ.items())
                if k.startswith('OS_')]
    return ' '.join(settings + ['.venv/bin/python', 'benchmarks/phase.py'] +
                    [shlex.quote(a) for a in argv])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in PHASES or '--out' not in argv:
        sys.exit('usage: phase.py {%s} --out FILE [run.py\'s options]'
                 % ','.join(PHASES))
    args = run.parse(argv[1:])
    args.profile_dir = None
    with tempfile.TemporaryDirectory(prefix='inspector-ha-bench-') as tmp:
        result = run._phase(argv[0], PHASES[argv[0]], tmp, args)
    result['meta'] = dict(run.meta(args, argv[1:]), command=_command(argv))
    args.out.write_text(json.dumps(result, indent=1) + '\n')
    print('%s: %.1f s, %.2f nodes/s, Ironic %.0f ms and the service %.1f '
          'ms of CPU per node, %s' % (
              argv[0], result['elapsed_s'], result['nodes_per_s'],
              result['cpu_ms_per_node']['ironic (all its processes)'],
              result['cpu_ms_per_node']['the service (all its processes)'],
              result['outcome']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
