"""Thread CPU of decoding one ramdisk post (``inspector_ha.api.body.decode``,
which every ``POST /v1/continue`` runs), alone, in one thread (analysis,
not a test or a benchmark)::

    .venv/bin/python benchmarks/body_decode.py [--rounds R]

Three payloads: the simulated ramdisks' (about 1.4 KB), the same as
large as a real agent's (about 20 KB, what the batch benchmarks post)
and the small one with 100 KB of logs, as ironic-python-agent sends its
logs base64-encoded in the post. Prints the median of ``--rounds``
rounds per payload, in ms of CPU per decode. Compare code back to back,
alternating (``PYTHONPATH=<worktree>`` imports another checkout); the
first line names the code imported.
"""

import argparse
import json
import statistics
import time

import testpath  # noqa: F401  (tests/functional on sys.path)

import ramdisk
from inspector_ha.api import body

MACS = ['52:54:00:12:34:%02x' % i for i in range(2)]
#: 100 KB of base64, as gzip output encodes.
LOGS = 'H4sIAAAAAAAAA' * 8000


def payloads():
    small = ramdisk.ipa_payload(MACS)
    return [('the simulated payload', small),
            ("a real agent's size (the batch benchmarks')",
             ramdisk.ipa_payload(MACS, real_size=True)),
            ('with 100 KB of logs', dict(small, logs=LOGS))]


def per_decode_ms(raw, runs):
    began = time.thread_time()
    for _ in range(runs):
        body.decode(raw)
    return (time.thread_time() - began) / runs * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=5)
    args = parser.parse_args()
    print('code: %s' % body.__file__)
    for name, payload in payloads():
        raw = json.dumps(payload).encode()
        runs = max(20, 2_000_000 // len(raw))
        per_decode_ms(raw, runs)
        medians = statistics.median(per_decode_ms(raw, runs)
                                    for _ in range(args.rounds))
        print('%s (%d bytes): %.3f ms of CPU per decode' % (
            name, len(raw), medians))


if __name__ == '__main__':
    main()
