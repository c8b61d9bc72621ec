"""Ironic as the client: Ironic 32.1.0's ``inspector`` inspect interface
drives inspector-ha, as sites that still run ironic-inspector do
(``openstack baremetal node inspect``): Ironic starts the introspection,
polls its status, fetches the data and aborts it; the service manages
boot (``[inspector] require_managed_boot = false``, the setting of
``doc/migrating-from-ironic-inspector.md``), or Ironic boots the ramdisk
itself for nodes whose boot interface can. Ironic 32.1.0 is the
service's node store too. The all-in-one, then the split cluster behind
the shipped HAProxy, listen where Ironic's ``[inspector]
endpoint_override`` points.
"""

import signal

import pytest
import requests

import backends
import batch
import embedded
import ironic_server
import ramdisk
import split

#: Seconds a batch may take to end ``manageable`` in Ironic.
FINISH = 120


@pytest.fixture(scope='module')
def inspector_port():
    return backends.free_port()


@pytest.fixture(scope='module')
def ironic32(inspector_port, obtain_backend):
    server = ironic_server.DrivingIronic('http://127.0.0.1:%d'
                                         % inspector_port)
    try:
        yield obtain_backend(server.start)
    finally:
        server.close()


class AllInOne:
    """``inspector-ha`` with no configuration file, on the port Ironic
    calls."""

    def __init__(self, tmp_path, ironic, port, obtain):
        self.proc, self.url = embedded.start(
            tmp_path, ironic.url, OS_DEFAULT__LISTEN_PORT=str(port))
        self.cluster = None

    def close(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(30) == 0


def _split(tmp_path, ironic, port, obtain):
    """Two APIs and two workers on PostgreSQL, RabbitMQ and Redis, behind
    the shipped HAProxy on the port Ironic calls."""
    return split.BehindHAProxy(tmp_path, ironic.url, obtain, port=port,
                               apis=2, workers=2)


@pytest.fixture(scope='module', params=['all-in-one', 'haproxy-split'])
def driven(request, tmp_path_factory, ironic32, inspector_port,
           obtain_backend):
    kind = {'all-in-one': AllInOne, 'haproxy-split': _split}[request.param]
    service = kind(tmp_path_factory.mktemp(request.param), ironic32,
                   inspector_port, obtain_backend)
    try:
        yield service
    finally:
        service.close()


@pytest.fixture
def nodes(ironic32):
    """``new(count, **payload options)``: nodes to inspect and their
    ramdisks' posts; deleted from Ironic afterwards."""
    made = []

    def new(count, **options):
        payloads = batch.create_nodes(ironic32, count)
        for uuid, payload in payloads.items():
            payload.update(options)
        made.extend(payloads)
        return payloads
    yield new
    for uuid in made:
        node = ironic32.get_node(uuid)
        if node['provision_state'] == 'inspect wait':
            ironic32.abort(uuid)
            _wait_provision(ironic32, [uuid], 'inspect failed')
        if ironic32.get_node(uuid)['provision_state'] == 'inspect failed':
            ironic32.set_provision_state(uuid, 'manage', 'manageable')
        ironic32.delete_node(uuid)


def _wait_provision(ironic, uuids, state, timeout=FINISH):
    def reached():
        states = {u: ironic.get_node(u)['provision_state'] for u in uuids}
        return set(states.values()) == {state} or None
    backends.wait_for(reached, timeout, interval=0.5, message=(
        'not every node %s after %d s: %s' % (state, timeout, {
            u: ironic.get_node(u)['provision_state'] for u in uuids})))


def _status(service, uuid):
    return requests.get('%s/v1/introspection/%s' % (service.url, uuid),
                        timeout=30).json()


def _inspect(ironic, service, payloads):
    """Ironic inspects ``payloads``' nodes, their ramdisks posting to the
    service; wait until Ironic has them all ``manageable``."""
    disks = ramdisk.Ramdisks(ironic.url, [service.url], payloads).start()
    try:
        for uuid in payloads:
            ironic.inspect(uuid)
        _wait_provision(ironic, list(payloads), 'manageable')
    finally:
        disks.stop()


def test_ironic_inspects_a_batch_to_manageable_with_properties_and_inventory(
        ironic32, driven, nodes):
    payloads = nodes(4)
    _inspect(ironic32, driven, payloads)
    for uuid in payloads:
        node = ironic32.get_node(uuid)
        assert node['inspection_finished_at'] and not node['last_error']
        assert node['properties']['memory_mb'] == '8192'
        assert node['properties']['cpus'] == '4'
        assert ironic32.power_state(uuid) == 'power off'
        inventory = ironic32.inventory(uuid)['inventory']
        assert inventory['memory']['physical_mb'] == 8192
        assert _status(driven, uuid)['finished']
        assert ironic32.calls(
            'PUT', '/v1/nodes/%s/management/boot_device' % uuid) == 1


def test_ironic_booting_the_ramdisk_itself_leaves_power_and_boot_to_it(
        ironic32, driven, nodes):
    # NOTE: Ironic manages boot whenever the node's boot interface can
    # (here its real ``pxe`` one); ``require_managed_boot = true`` would
    # only make it refuse the nodes whose interface cannot (``fake``).
    payloads = nodes(2)
    for uuid in payloads:
        ironic32.manage_boot(uuid)
    _inspect(ironic32, driven, payloads)
    for uuid in payloads:
        node = ironic32.get_node(uuid)
        assert node['properties']['memory_mb'] == '8192', node
        assert not node['last_error']
        assert ironic32.power_state(uuid) == 'power off'
        assert _status(driven, uuid)['finished']
        # started with manage_boot=False: the service sets no boot device
        assert not ironic32.calls(
            'PUT', '/v1/nodes/%s/management/boot_device' % uuid)


def test_an_abort_in_ironic_cancels_the_introspection_in_the_service(
        ironic32, driven, nodes):
    uuid, = nodes(1)
    ironic32.inspect(uuid)
    _wait_provision(ironic32, [uuid], 'inspect wait', 30)
    backends.wait_for(lambda: ironic32.power_state(uuid) == 'power on', 30,
                      interval=0.2, message='the service never powered on')
    ironic32.abort(uuid)
    _wait_provision(ironic32, [uuid], 'inspect failed', 30)
    backends.wait_for(lambda: _status(driven, uuid)['finished'], 30,
                      interval=0.2, message='the service never aborted')
    assert _status(driven, uuid)['error'] == 'Canceled by operator'


def test_a_ramdisk_error_reaches_ironics_last_error(ironic32, driven, nodes):
    payloads = nodes(1, error='the disk is on fire')
    uuid, = payloads
    disks = ramdisk.Ramdisks(ironic32.url, [driven.url], payloads).start()
    try:
        ironic32.inspect(uuid)
        _wait_provision(ironic32, [uuid], 'inspect failed', 60)
    finally:
        disks.stop()
    assert 'the disk is on fire' in ironic32.get_node(uuid)['last_error']
    assert 'the disk is on fire' in _status(driven, uuid)['error']


@pytest.mark.parametrize('driven', ['haproxy-split'], indirect=True)
def test_a_worker_killed_mid_batch_leaves_every_node_manageable(
        ironic32, driven, nodes):
    payloads = nodes(8)
    victim = driven.cluster.workers[0]
    disks = ramdisk.Ramdisks(ironic32.url, [driven.url], payloads).start()
    try:
        for uuid in payloads:
            ironic32.inspect(uuid)
        backends.wait_for(lambda: any(
            ironic32.power_state(u) == 'power on' for u in payloads), 30,
            interval=0.1, message='no node was powered on')
        victim.kill()
        victim.wait(10)
        _wait_provision(ironic32, list(payloads), 'manageable')
    finally:
        disks.stop()
        _restart(driven.cluster, victim)
    assert all(_status(driven, u)['finished'] and not
               _status(driven, u)['error'] for u in payloads)


def _restart(the_cluster, killed):
    """Start ``killed`` again and wait until it says it started (a
    SIGTERM before that would end it with -15)."""
    logged = len(killed.log.read_text())
    new = the_cluster.restart(killed)
    backends.wait_for(lambda: 'started with' in new.log.read_text()[logged:],
                      60, interval=0.2, message=the_cluster.logs())
