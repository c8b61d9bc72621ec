"""Benchmark: what each kind of Ironic call the service makes costs
Ironic in CPU, one call at a time or C at once, on a fresh all-in-one Ironic 39
(fake-hardware, SQLite) -- where a node's Ironic CPU goes (issue 15).

    .venv/bin/python benchmarks/ironic_costs.py [--nodes N] [--concurrency C]

Each kind is made once per node, in the order of an introspection; the
CPU of Ironic's processes over the kind (asynchronous power actions
included: it waits until every node has settled), less its idle CPU
over the same time, divided by the calls. With ``--concurrency C`` the
calls of a kind are made from C threads at once, as a batch makes them:
the difference from C = 1 is what concurrency itself costs Ironic.
Not a test.
"""

import argparse
from concurrent import futures
import time

import measure
import testpath  # noqa: F401  (puts tests/functional on sys.path)
import backends
import ironic_server
import batch

PORT_FIELDS = ('uuid,address,local_link_connection,physical_network,'
               'pxe_enabled')
#: (name, method, path, body, expected status), in an introspection's order.
KINDS = [
    ('GET node (all fields)', 'GET', '/v1/nodes/{u}', None, 200),
    ('GET node (start fields)', 'GET',
     '/v1/nodes/{u}?fields=uuid,provision_state,maintenance,driver_info',
     None, 200),
    ('GET validate', 'GET', '/v1/nodes/{u}/validate', None, 200),
    ('GET ports (addresses)', 'GET',
     '/v1/ports?fields=address&node_uuid={u}', None, 200),
    ('PUT boot device', 'PUT', '/v1/nodes/{u}/management/boot_device',
     {'boot_device': 'pxe', 'persistent': False}, 204),
    ('PUT power reboot', 'PUT', '/v1/nodes/{u}/states/power',
     {'target': 'rebooting'}, 202),
    ('GET ports (processing fields)', 'GET',
     '/v1/ports?fields=%s&node_uuid={u}' % PORT_FIELDS, None, 200),
    ('PATCH node properties', 'PATCH', '/v1/nodes/{u}',
     [{'op': 'add', 'path': '/properties/cpus', 'value': 4},
      {'op': 'add', 'path': '/properties/memory_mb', 'value': 8192},
      {'op': 'add', 'path': '/properties/local_gb', 'value': 100},
      {'op': 'add', 'path': '/properties/cpu_arch', 'value': 'x86_64'}],
     200),
    ('PUT power off', 'PUT', '/v1/nodes/{u}/states/power',
     {'target': 'power off'}, 202),
]


def cpu_seconds(root):
    """CPU seconds of ``root`` and its descendants so far."""
    return sum(measure.cpu_seconds(pid) for pid in measure.tree(root))


def settled(ironic, uuids):
    return all(ironic.request('GET', f'/v1/nodes/{u}?fields=target_power_'
                              'state')['target_power_state'] is None
               for u in uuids)


def cost_of(ironic, root, uuids, kind, idle_per_s, concurrency=1):
    name, method, path, body, status = kind
    before, began = cpu_seconds(root), time.monotonic()
    with futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda uuid: ironic.request(
            method, path.format(u=uuid), expect=(status,), json=body),
            uuids))
    if method == 'PUT' and 'power' in path:
        # NOTE: the polls are counted too; one GET per node at most.
        time.sleep(1)
        backends.wait_for(lambda: settled(ironic, uuids), 120)
    spent = cpu_seconds(root) - before
    elapsed = time.monotonic() - began
    return name, (spent - idle_per_s * elapsed) / len(uuids) * 1000


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--nodes', type=int, default=100)
    parser.add_argument('--concurrency', type=int, default=1,
                        help='calls of a kind made at once (1)')
    args = parser.parse_args(argv)
    ironic = ironic_server.Ironic().start()
    try:
        uuids = list(batch.create_nodes(ironic, args.nodes))
        root = ironic.proc.pid
        time.sleep(2)
        before = cpu_seconds(root)
        time.sleep(5)
        idle_per_s = (cpu_seconds(root) - before) / 5
        print('Ironic idle: %.1f%% of one core' % (idle_per_s * 100))
        print('%d nodes, %d call(s) at once' % (args.nodes, args.concurrency))
        print('| Ironic call | Ironic CPU ms per call |\n|---|---|')
        total = 0.0
        for kind in KINDS:
            name, ms = cost_of(ironic, root, uuids, kind, idle_per_s,
                               args.concurrency)
            total += ms if 'start fields' not in name else 0
            print('| %s | %.1f |' % (name, ms), flush=True)
        print('| = one introspection (all fields) | %.1f |' % total)
    finally:
        ironic.close()


if __name__ == '__main__':
    main()
