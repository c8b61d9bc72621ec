"""A node lock held by a SIGKILLed worker is free again within
``[coordination] lease_timeout`` plus a margin on every coordination
backend (doc/guarantees.md L2), so its redelivered requests proceed
within seconds instead of waiting for a backend's default lock expiry.
"""

import subprocess
import sys
import threading
import time
import uuid as uuidlib


from inspector_ha.common import retry
from inspector_ha.coordination import tooz_backend

LEASE = 2
#: What an operator may count on: the lease, plus one heartbeat and the
#: backend's own rounding (ZooKeeper: 2 ticks; etcd: its lease granularity).
BOUND = LEASE + 3
HOLDER = '''
import sys, threading
from inspector_ha.common import retry
from inspector_ha.coordination import tooz_backend
policy = retry.RetryPolicy('coordination', 3, 0.5, threading.Event(),
                           tooz_backend.RETRYABLE)
coordinator = tooz_backend.Coordinator(sys.argv[1], 'holder', policy, %d)
coordinator.start()
assert coordinator.node_lock(sys.argv[2]).try_acquire()
print('held', flush=True)
threading.Event().wait()
''' % LEASE


def _coordinator(url):
    policy = retry.RetryPolicy('coordination', 3, 0.5, threading.Event(),
                               tooz_backend.RETRYABLE)
    coordinator = tooz_backend.Coordinator(url, 'taker-' + uuidlib.uuid4().hex,
                                           policy, LEASE)
    coordinator.start()
    return coordinator


def test_a_sigkilled_holders_node_lock_is_free_again_within_its_lease(
        coordination_url):
    node = str(uuidlib.uuid4())
    holder = subprocess.Popen([sys.executable, '-c', HOLDER,
                               coordination_url, node],
                              stdout=subprocess.PIPE, text=True)
    taker = _coordinator(coordination_url)
    try:
        assert holder.stdout.readline().strip() == 'held'
        lock = taker.node_lock(node)
        assert not lock.try_acquire()
        holder.kill()
        holder.wait()
        killed = time.monotonic()
        while not lock.try_acquire():
            assert time.monotonic() - killed < BOUND + 5, 'never freed'
            time.sleep(0.05)
        freed = time.monotonic() - killed
        lock.release()
    finally:
        holder.kill()
        taker.stop()
    print('lock free %.2f s after SIGKILL on %s' % (
        freed, coordination_url.split(':')[0]))
    assert freed < BOUND
