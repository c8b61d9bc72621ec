"""What one read of a node costs Ironic, whole or with ``fields``.

Starts the tests' one-process Ironic (SQLite, fake-hardware), enrolls
20 nodes, and reads them one after another (no concurrency), taking
Ironic's CPU over each series of reads. The series alternate, so a
drift of the machine shows as a spread within each kind::

    .venv/bin/python benchmarks/node_read.py [--reads 400] [--rounds 3]
"""

import argparse
import time

import psutil
import requests

import testpath  # noqa: F401  (tests/functional on sys.path)
import ironic_server

NODES = 20
#: Each kind of read: its name and its query.
KINDS = (
    ('whole node', None),
    ('ten fields', {'fields': 'uuid,name,driver,driver_info,properties,'
                              'extra,provision_state,power_state,'
                              'maintenance,instance_uuid'}),
    ('driver_info', {'fields': 'driver_info'}),
)
HEADERS = {'X-OpenStack-Ironic-API-Version': '1.89'}


def cpu_seconds(procs):
    return sum(sum(proc.cpu_times()[:2]) for proc in procs)


def read_series(session, url, uuids, params, reads, procs):
    """Ironic's CPU and the wall time per read (ms), and the body size."""
    cpu, began = cpu_seconds(procs), time.monotonic()
    for index in range(reads):
        answer = session.get(f'{url}/v1/nodes/{uuids[index % len(uuids)]}',
                             params=params, headers=HEADERS, timeout=30)
        answer.raise_for_status()
    return ((cpu_seconds(procs) - cpu) / reads * 1000,
            (time.monotonic() - began) / reads * 1000, len(answer.content))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--reads', type=int, default=400)
    parser.add_argument('--rounds', type=int, default=3)
    args = parser.parse_args()
    with ironic_server.Ironic() as ironic:
        uuids = [ironic.create_node(macs=[f'52:54:00:00:10:{i:02x}'])
                 for i in range(NODES)]
        master = psutil.Process(ironic.proc.pid)
        procs = [master, *master.children(recursive=True)]
        session = requests.Session()
        read_series(session, ironic.url, uuids, None, args.reads, procs)
        for _ in range(args.rounds):
            for name, params in KINDS:
                cpu, wall, size = read_series(session, ironic.url, uuids,
                                              params, args.reads, procs)
                print(f'{name:12s} {cpu:6.2f} ms of Ironic CPU, '
                      f'{wall:6.2f} ms wall, {size:5d} bytes', flush=True)


if __name__ == '__main__':
    main()
