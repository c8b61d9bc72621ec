"""Soak: a random fault every 10 s for a given time, on one cluster under
a stream of batches, with the history checker at the end.

    .venv/bin/python tests/fault/soak.py --seconds 600 --nodes 150  # long

Starts its own Ironic and private backends. ``test_soak.py`` runs the
short form in CI (``SOAK_SECONDS``, default 60). Exits 1 on a violation.
"""

import argparse
import pathlib
import random
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
for path in (HERE, HERE.parent / 'functional'):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import faults  # noqa: E402
import harness as harness_mod  # noqa: E402
import history  # noqa: E402

#: Faults the soak draws from (each fired at once: ``mid_batch=0``).
FAULTS = ('kill_worker', 'term_worker', 'pause_worker', 'kill_api',
          'term_api', 'pause_api', 'kill_leader', 'pause_leader',
          'restart_rabbitmq', 'restart_redis', 'restart_database',
          'partition_worker')


def soak(harness, seconds, period=10.0, seed=None, log=print):
    """Batches back to back while a nemesis thread injects one random
    fault every ``period``; returns (drivers, faults)."""
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    injected, drivers, calm = [], [], threading.Event()
    nemesis = harness_mod.Background(_nemesis, harness, deadline, period,
                                     rng, injected, log, calm)
    nodes = dict(harness.nodes)
    chunks = [dict(list(nodes.items())[i::4]) for i in range(4)]
    try:
        while time.monotonic() < deadline:
            harness.nodes = chunks[len(drivers) % len(chunks)]
            drivers.append(harness.run_batch()[0])
    except BaseException:
        calm.set()
        raise
    finally:
        harness.nodes = nodes
    nemesis.result(300)
    return drivers, injected


def _nemesis(harness, deadline, period, rng, injected, log, calm):
    while time.monotonic() < deadline and not calm.is_set():
        started = time.monotonic()
        fault = _inject_now(harness, rng.choice(FAULTS))
        injected.append(fault)
        log('soak: %s' % fault.line(), flush=True)
        faults._pass(min(period - (time.monotonic() - started),
                         deadline - time.monotonic()))


def _inject_now(harness, name):
    if name == 'partition_worker' and (
            harness.proxied is None or harness.proxied.poll() is not None):
        name = 'kill_worker'
    return getattr(faults, name)(harness, mid_batch=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=600)
    parser.add_argument('--nodes', type=int, default=150)
    parser.add_argument('--seed', type=int, default=None)
    args = parser.parse_args(argv)
    import ironic_server
    import private
    servers = harness_mod.Servers(private.RabbitMQ(), private.Redis(),
                                  private.PostgreSQL())
    with ironic_server.Ironic() as ironic:
        servers.ensure_running()
        try:
            violations = run(tempfile.mkdtemp(prefix='soak-'), ironic,
                             servers, args.seconds, args.nodes, args.seed)
        finally:
            for server in (servers.rabbit, servers.redis, servers.database):
                server.close()
    print('\n'.join(violations) or 'soak: 0 violations')
    return 1 if violations else 0


def run(workdir, ironic, servers, seconds, nodes, seed=None):
    """One soak on a fresh cluster; returns the violations."""
    harness = harness_mod.Harness(workdir, ironic, servers, nodes=nodes,
                                  proxied=True).start()
    try:
        drivers, injected = soak(harness, seconds, seed=seed)
    except BaseException:
        print(harness.logs(40))
        harness.stop()
        raise
    driver = _merge(drivers)
    killed = [p for fault in injected for p in fault.killed]
    fault = faults.Fault('soak', 'faults injected: %d' % len(injected),
                         killed=killed, notes={'faults': sorted(
                             f.name for f in injected)})
    return history.conclude(harness, driver, fault)


def _merge(drivers):
    merged = drivers[0]
    for other in drivers[1:]:
        merged.accepted |= other.accepted
        merged.retries += other.retries
        merged.refused.update(other.refused)
    return merged


if __name__ == '__main__':
    sys.exit(main())
