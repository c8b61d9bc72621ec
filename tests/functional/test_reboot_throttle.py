"""The cluster-wide reboot throttle on each coordination backend that
holds a lock across processes: a worker waiting for the lock longer than
a second waits on, and the power-ons come a quantum apart (the whole
cluster's, through Ironic: test_periodic_jobs)."""

import threading
import time

from inspector_ha.engine import throttle

import members as members_mod

QUANTUM = 1.5


def test_two_workers_power_on_a_quantum_apart_though_each_waits_over_a_second(
        coordination_url):
    """With a timeout, the ZooKeeper and etcd drivers' acquire raised
    their client's error after a second under a quantum over one."""
    coordinators = [members_mod.coordinator_at(coordination_url)
                    for _ in range(2)]
    ran, errors = [], []

    def power_on(throttled):
        try:
            throttled.run(lambda: ran.append(time.monotonic()))
        except Exception as exc:
            errors.append(exc)
    try:
        threads = [threading.Thread(target=power_on, args=(
            throttle.RebootThrottle(c, QUANTUM, threading.Event()),))
            for c in coordinators]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(4 * QUANTUM + 10)
    finally:
        for the_coordinator in coordinators:
            the_coordinator.stop()
    assert not errors, errors
    assert len(ran) == 2 and ran[1] - ran[0] >= QUANTUM - 0.01, ran
