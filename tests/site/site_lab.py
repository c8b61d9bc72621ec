"""Three controllers on one bridge: a network namespace each, as hosts.

The bridge lives in a namespace of its own; controller ``i`` (1-based) is
a namespace joined to it by a veth pair, with ``198.51.100.i/24``
(TEST-NET-2) on ``eth0``. The root namespace joins the bridge too, with
``198.51.100.254``, so the test (its Ironic, its HAProxy in front of the
APIs, its ramdisks) reaches every controller and they reach it. Each
controller has its own network stack, so its servers listen on their
usual ports.

A whole-controller fault acts on every process in its namespace
(``ip netns pids``): a power loss SIGKILLs them, a freeze SIGSTOPs them,
a network cut takes its bridge port down (its processes keep running,
unreachable).
"""

import os
import signal
import subprocess
import uuid

import backends
import netns

NETWORK = '198.51.100'
ROOT_ADDRESS = NETWORK + '.254'


def _ip(*argv, check=True):
    return subprocess.run(['ip', *argv], check=check, capture_output=True,
                          text=True, timeout=30)


class Controller:
    """A host: a namespace with an address on the bridge."""

    def __init__(self, lab, index):
        self.index = index
        self.ns = '%s-c%d' % (lab.prefix, index)
        self.address = '%s.%d' % (NETWORK, index)
        self.prefix = ['ip', 'netns', 'exec', self.ns]
        self._bridge_ns = lab.bridge_ns
        self._port = 'c%d-%s' % (index, lab.tag)

    def create(self):
        _ip('netns', 'add', self.ns)
        _ip('-n', self._bridge_ns, 'link', 'add', self._port, 'type',
            'veth', 'peer', 'name', 'eth0', 'netns', self.ns)
        _ip('-n', self._bridge_ns, 'link', 'set', self._port, 'master',
            'br0', 'up')
        _ip('-n', self.ns, 'addr', 'add', self.address + '/24', 'dev',
            'eth0')
        _ip('-n', self.ns, 'link', 'set', 'eth0', 'up')
        _ip('-n', self.ns, 'link', 'set', 'lo', 'up')

    def pids(self):
        """Every process running in this controller's namespace."""
        out = _ip('netns', 'pids', self.ns, check=False).stdout
        return [int(pid) for pid in out.split()]

    def signal_all(self, signum):
        for pid in self.pids():
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    def power_loss(self):
        """Every process SIGKILLed at once, as a power cut does."""
        self.signal_all(signal.SIGKILL)
        backends.wait_for(lambda: not self.pids(), 30, interval=0.1,
                          message='processes of %s outlived SIGKILL' %
                          self.ns)

    def freeze(self):
        self.signal_all(signal.SIGSTOP)

    def thaw(self):
        self.signal_all(signal.SIGCONT)

    def cut(self):
        """Its link down: nothing flows either way, connections stay."""
        _ip('-n', self._bridge_ns, 'link', 'set', self._port, 'down')

    def heal(self):
        _ip('-n', self._bridge_ns, 'link', 'set', self._port, 'up')


class Lab:
    """The bridge, the root namespace's port on it and ``hosts``
    controllers."""

    def __init__(self, hosts=3):
        netns.check_available()
        self.tag = uuid.uuid4().hex[:6]
        self.prefix = 'site-%s' % self.tag
        self.bridge_ns = '%s-br' % self.prefix
        self._root_port = 'site-%s' % self.tag
        self.controllers = [Controller(self, i + 1) for i in range(hosts)]

    def create(self):
        _ip('netns', 'add', self.bridge_ns)
        _ip('-n', self.bridge_ns, 'link', 'add', 'br0', 'type', 'bridge')
        _ip('-n', self.bridge_ns, 'link', 'set', 'br0', 'up')
        _ip('link', 'add', self._root_port, 'type', 'veth', 'peer', 'name',
            'root', 'netns', self.bridge_ns)
        _ip('-n', self.bridge_ns, 'link', 'set', 'root', 'master', 'br0',
            'up')
        _ip('addr', 'add', ROOT_ADDRESS + '/24', 'dev', self._root_port)
        _ip('link', 'set', self._root_port, 'up')
        for controller in self.controllers:
            controller.create()
        return self

    def close(self):
        for controller in self.controllers:
            controller.thaw()
            controller.signal_all(signal.SIGKILL)
            _ip('netns', 'del', controller.ns, check=False)
        _ip('link', 'del', self._root_port, check=False)
        _ip('netns', 'del', self.bridge_ns, check=False)
