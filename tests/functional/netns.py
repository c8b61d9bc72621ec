"""A PXE network in network namespaces: inspector hosts running a real
dnsmasq, and nodes asking for a lease with ``busybox udhcpc``.

One namespace holds a bridge; host ``i`` (1-based) and every node are
namespaces joined to it by a veth pair.  Host ``i`` has ``192.0.2.i/24``
on ``pxe0`` and serves its own DHCP range.  Namespace names start with a
random prefix, so parallel runs do not collide; :meth:`Lab.close` kills
dnsmasq and deletes every namespace (which deletes the veths).

A filter driver in the root namespace acts on a host's namespace with
``[pxe_filter] command_prefix = host.command_prefix``.
"""

import os
import pathlib
import shutil
import subprocess
import uuid

from oslo_config import cfg

from inspector_ha.conf import opts
import backends

INTERFACE = 'pxe0'
NODE_INTERFACE = 'eth0'
_SCRIPT = '''#!/bin/sh
[ "$1" = bound ] && echo "lease $serverid $ip"
exit 0
'''


def _run(*argv, check=True):
    return subprocess.run(argv, check=check, capture_output=True, text=True,
                          timeout=30)


def check_available():
    """Raise BackendUnavailable unless namespaces and the tools work."""
    if os.geteuid() != 0:
        raise backends.BackendUnavailable('network namespaces need root')
    for tool in ('ip', 'dnsmasq', 'busybox', 'nft', 'iptables-restore'):
        if shutil.which(tool) is None:
            raise backends.BackendUnavailable('%s is not installed' % tool)


class Host:
    """An inspector host: a namespace with dnsmasq on ``pxe0``."""

    def __init__(self, lab, index):
        self.index = index
        self.ns = '%s-h%d' % (lab.prefix, index)
        self.address = '192.0.2.%d' % index
        self.workdir = lab.workdir / ('h%d' % index)
        self.hostsdir = self.workdir / 'hostsdir'
        self.command_prefix = ['ip', 'netns', 'exec', self.ns]
        self.dnsmasq = None

    def start_dnsmasq(self):
        self.hostsdir.mkdir(parents=True, exist_ok=True)
        first = 100 + 20 * (self.index - 1)
        argv = self.command_prefix + [
            'dnsmasq', '--no-daemon', '--conf-file=/dev/null', '--port=0',
            '--no-ping', '--bind-interfaces', '--interface=' + INTERFACE,
            '--except-interface=lo', '--user=root', '--group=root',
            '--dhcp-range=192.0.2.%d,192.0.2.%d,12h' % (first, first + 19),
            '--dhcp-leasefile=%s' % (self.workdir / 'leases'),
            '--pid-file=%s' % (self.workdir / 'dnsmasq.pid'),
            '--dhcp-hostsdir=%s' % self.hostsdir, '--log-dhcp']
        self.log = (self.workdir / 'dnsmasq.log').open('w')
        self.dnsmasq = subprocess.Popen(argv, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        backends.wait_for(self._dhcp_listening, 10,
                          message='dnsmasq in %s did not start' % self.ns)

    def _dhcp_listening(self):
        if self.dnsmasq.poll() is not None:
            raise backends.BackendUnavailable(
                'dnsmasq in %s exited: %s' % (self.ns, self.log_text()))
        out = _run(*self.command_prefix, 'ss', '-Hlun', 'sport = :67').stdout
        return bool(out.strip())

    def log_text(self):
        return (self.workdir / 'dnsmasq.log').read_text(errors='replace')

    def stop(self):
        if self.dnsmasq is not None and self.dnsmasq.poll() is None:
            self.dnsmasq.kill()
            self.dnsmasq.wait()
        if self.dnsmasq is not None:
            self.log.close()


class Node:
    """A bare-metal node: a namespace whose ``eth0`` has ``mac``."""

    def __init__(self, lab, index, mac):
        self.ns = '%s-n%d' % (lab.prefix, index)
        self.mac = mac
        self.script = lab.script

    def dhcp(self, timeout=2):
        """The server address of the lease this node gets, or None after
        about ``timeout`` seconds (one DISCOVER per second)."""
        argv = ['ip', 'netns', 'exec', self.ns, 'busybox', 'udhcpc',
                '-i', NODE_INTERFACE, '-n', '-q', '-f', '-t',
                str(max(1, round(timeout))), '-T', '1', '-A', '1',
                '-s', str(self.script)]
        out = subprocess.run(argv, capture_output=True, text=True,
                             timeout=timeout + 10).stdout
        for line in out.splitlines():
            if line.startswith('lease '):
                return line.split()[1]
        return None


class Lab:
    """Hosts and nodes on one bridge; see the module docstring."""

    def __init__(self, workdir, hosts=2):
        check_available()
        self.prefix = 'ih' + uuid.uuid4().hex[:6]
        self.workdir = pathlib.Path(workdir)
        self.bridge_ns = self.prefix + '-br'
        self.namespaces = []
        self.hosts, self.nodes = [], []
        self.script = self.workdir / 'udhcpc.sh'
        self.script.write_text(_SCRIPT)
        self.script.chmod(0o755)
        try:
            self._add_namespace(self.bridge_ns)
            self._bridge()
            for index in range(1, hosts + 1):
                self._add_host(index)
        except BaseException:
            self.close()
            raise

    def add_node(self, mac):
        """A new node namespace whose interface has ``mac``."""
        node = Node(self, len(self.nodes) + 1, mac)
        self.nodes.append(node)
        self._add_namespace(node.ns)
        self._link(node.ns, 'n%d' % len(self.nodes), NODE_INTERFACE, mac)
        return node

    def host(self, address):
        """The host serving from ``address``."""
        return next(h for h in self.hosts if h.address == address)

    def close(self):
        for host in self.hosts:
            host.stop()
        for ns in reversed(self.namespaces):
            _run('ip', 'netns', 'delete', ns, check=False)
        self.namespaces = []

    def _add_namespace(self, ns):
        try:
            _run('ip', 'netns', 'add', ns)
        except subprocess.CalledProcessError as exc:
            raise backends.BackendUnavailable(
                'ip netns add failed: %s' % exc.stderr) from exc
        self.namespaces.append(ns)
        _run('ip', '-n', ns, 'link', 'set', 'lo', 'up')

    def _bridge(self):
        ns = self.bridge_ns
        _run('ip', '-n', ns, 'link', 'add', 'br0', 'type', 'bridge',
             'forward_delay', '0', 'stp_state', '0')
        _run('ip', '-n', ns, 'link', 'set', 'br0', 'up')

    def _link(self, ns, port, interface, mac=None):
        """A veth from the bridge (``port``) to ``interface`` in ``ns``."""
        _run('ip', '-n', self.bridge_ns, 'link', 'add', port, 'type', 'veth',
             'peer', 'name', interface, 'netns', ns)
        if mac:
            _run('ip', '-n', ns, 'link', 'set', interface, 'address', mac)
        _run('ip', '-n', ns, 'link', 'set', interface, 'up')
        _run('ip', '-n', self.bridge_ns, 'link', 'set', port, 'master',
             'br0', 'up')

    def _add_host(self, index):
        host = Host(self, index)
        host.workdir.mkdir(parents=True, exist_ok=True)
        self.hosts.append(host)
        self._add_namespace(host.ns)
        self._link(host.ns, 'h%d' % index, INTERFACE)
        _run('ip', '-n', host.ns, 'addr', 'add', host.address + '/24',
             'dev', INTERFACE)
        host.start_dnsmasq()


def filter_conf(driver, host):
    """A configuration of PXE filter ``driver`` on ``host`` (a
    :class:`Host`)."""
    conf = cfg.ConfigOpts()
    for group, options in opts.list_opts():
        conf.register_opts(options, group=group)
    conf([], default_config_files=[], default_config_dirs=[])
    conf.set_override('driver', driver, 'pxe_filter')
    conf.set_override('command_prefix', host.command_prefix, 'pxe_filter')
    conf.set_override('dnsmasq_interface', INTERFACE, 'iptables')
    conf.set_override('dhcp_hostsdir', str(host.hostsdir),
                      'dnsmasq_pxe_filter')
    return conf
