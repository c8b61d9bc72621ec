"""The real ironic-python-agent (PyPI, ``ipa.py``) inventories this
machine and posts it, with its own ``call_inspector``, to the all-in-one
and to a split cluster behind HAProxy; the Ironic node, whose one port
has this machine's MAC, finishes with this machine's properties."""

import os
import platform

import pytest
import requests

import backends
import cluster as cluster_mod
import embedded
import haproxy
import ipa


class _Embedded:
    def __init__(self, tmp_path, ironic, obtain):
        self.proc, self.url = embedded.start(
            tmp_path, ironic.url, OS_PROCESSING__STORE_DATA='database')

    def close(self):
        self.proc.terminate()
        assert self.proc.wait(30) == 0


class _Split:
    def __init__(self, tmp_path, ironic, obtain):
        haproxy.binary()  # before the cluster: a skip leaves none
        self.cluster = cluster_mod.Cluster(
            tmp_path, obtain(backends.postgres_url),
            obtain(backends.rabbit_url), obtain(backends.redis_url),
            ironic.url, conf={'processing': {'store_data': 'database'}}
        ).start()
        self.proxy = haproxy.HAProxy(self.cluster.api_urls).start()
        self.url = self.proxy.url

    def close(self):
        self.proxy.stop()
        assert set(self.cluster.stop().values()) == {0}


@pytest.fixture(params=[_Embedded, _Split], ids=['all-in-one', 'split'])
def inspector(request, tmp_path, ironic, obtain_backend):
    service = request.param(tmp_path, ironic, obtain_backend)
    try:
        yield service
    finally:
        service.close()


@pytest.fixture
def this_machine(ironic):
    """An Ironic node whose one PXE port has this machine's first MAC."""
    mac = ipa.machine_macs()[0]
    uuid = ironic.create_node(name='this-machine', macs=[mac])
    try:
        yield uuid, mac
    finally:
        ironic.delete_node(uuid)


def _status(url, uuid):
    return requests.get('%s/v1/introspection/%s' % (url, uuid),
                        timeout=30).json()


def test_the_real_agent_posts_this_machine_and_the_node_finishes_with_it(
        inspector, this_machine, ironic):
    uuid, mac = this_machine
    resp = requests.post('%s/v1/introspection/%s' % (inspector.url, uuid),
                         timeout=30)
    assert resp.status_code == 202, resp.text
    backends.wait_for(lambda: _status(inspector.url, uuid)['state'] ==
                      'waiting', 60)
    assert ipa.inspect(inspector.url + '/v1/continue') == uuid
    status = backends.wait_for(
        lambda: (lambda s: s if s['finished'] else None)(
            _status(inspector.url, uuid)), 60)
    assert (status['state'], status['error']) == ('finished', None)
    data = requests.get('%s/v1/introspection/%s/data' % (inspector.url,
                                                         uuid),
                        timeout=30).json()
    props = ironic.get_node(uuid)['properties']
    assert str(props['cpus']) == str(os.cpu_count())
    assert props['cpu_arch'] == platform.machine()
    assert ipa.memory_mib() <= int(props['memory_mb']) \
        <= 2 * ipa.memory_mib()
    root = data['root_disk']
    assert root['size'] == ipa.disk_bytes(root['name'])
    assert int(props['local_gb']) == root['size'] // 2 ** 30 - 1
    # NOTE: this machine did not boot from PXE, so the agent reports no
    # boot_interface (no BOOTIF on the kernel command line): as 12.5 does
    # ([processing] update_pxe_enabled), the port is then not the PXE one.
    assert data['boot_interface'] is None
    assert [(p['address'], p['pxe_enabled'])
            for p in ironic.ports(uuid)] == [(mac, False)]
