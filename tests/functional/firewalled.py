"""A split cluster whose 3 workers each manage the nftables PXE filter
of their own inspector host (a network namespace running a real
dnsmasq, ``netns.py``), and how to look at those filters: shared by
``test_pxe_firewall.py`` and ``benchmarks/site.py``."""

import signal
import subprocess
import time

import backends
import cluster as cluster_mod
import netns

#: The nftables table the nftables driver manages.
TABLE = 'inspector_ha'


def nft(host, *args):
    return subprocess.run(host.command_prefix + ['nft', *args],
                          capture_output=True, text=True, timeout=10)


def is_open(host):
    """Whether the host's pass rule is armed (its lease not expired)."""
    out = nft(host, 'list', 'set', 'inet', TABLE, 'pass').stdout
    return 'expires' in out


def _in_set(host, name, mac):
    """One element looked up (listing a set of 20,000 takes longer than
    what is being timed)."""
    return nft(host, 'get', 'element', 'inet', TABLE, name,
               '{ %s }' % mac).returncode == 0


def blacklisted(host, mac):
    return _in_set(host, 'black', mac)


def whitelisted(host, mac):
    return _in_set(host, 'white', mac)


class Firewalled:
    """1 API and 3 workers; worker i manages host i+1's nftables."""

    def __init__(self, workdir, ironic, transport, database, coordination,
                 **pxe):
        self.ironic = ironic
        (workdir / 'lab').mkdir()
        self.lab = netns.Lab(workdir / 'lab', hosts=3)
        self.cluster = cluster_mod.Cluster(
            workdir / 'cluster', database, transport, coordination,
            ironic.url, apis=1, workers=0,
            conf={'iptables': {'dnsmasq_interface': netns.INTERFACE}})
        self.cluster.start()
        for host in self.lab.hosts:
            self.cluster.add_worker({'pxe_filter': dict({
                'driver': 'nftables', 'open_lease': 1.0,
                'command_prefix': ','.join(host.command_prefix)}, **pxe)})
        self.api = self.cluster.apis[0].url
        self.nodes = []

    def status(self):
        return self.cluster.status()

    def leader_host(self):
        holder = self.status()['leaders'].get('firewall', {}).get('holder')
        if holder is None:
            return None
        index = int(holder.split('.')[0].split('-')[1])
        return self.lab.hosts[index]

    def open_hosts(self):
        return [h for h in self.lab.hosts if is_open(h)]

    def close(self):
        codes = self.cluster.stop()
        try:
            # NOTE: a worker a test killed answers -9; all others exit 0.
            assert set(codes.values()) <= {0, -signal.SIGKILL}, codes
            assert not self.open_hosts(), 'PXE left open after SIGTERM'
        finally:
            self.lab.close()
            for uuid in self.nodes:
                self.ironic.delete_node(uuid)


def add_port(setup):
    """A new port in Ironic; return its MAC and when it was created."""
    uuid = setup.ironic.create_node()
    setup.nodes.append(uuid)
    mac = '52:54:01:%02x:%02x:%02x' % tuple(
        int(uuid.replace('-', '')[i:i + 2], 16) for i in (0, 2, 4))
    setup.ironic.request('POST', '/v1/ports', expect=(201,),
                         json={'node_uuid': uuid, 'address': mac})
    return mac, time.monotonic()


def blacklisted_everywhere(setup, mac, since, timeout):
    backends.wait_for(lambda: all(blacklisted(h, mac)
                                  for h in setup.lab.hosts), timeout,
                      interval=0.02, message='not blacklisted everywhere')
    return time.monotonic() - since
