"""Introspection end to end on a split cluster: 2 API processes, 3
workers, a real broker, coordination backend, database and Ironic."""

import collections
import uuid as uuidlib

import pytest
import requests
import sqlalchemy as sa

import backends
import cluster as cluster_mod
import ramdisk

NODES = 200


def _macs(i):
    return ['52:54:%02x:%02x:%02x:01' % (i >> 16, (i >> 8) & 255, i & 255),
            '52:54:%02x:%02x:%02x:02' % (i >> 16, (i >> 8) & 255, i & 255)]


def _create_nodes(ironic, count):
    """Nodes with one PXE port each; their ramdisks report two NICs."""
    seed = uuidlib.uuid4().int % 60000
    macs = [_macs(seed * 256 + i) for i in range(count)]
    bmcs = ['198.51.%d.%d' % ((seed + i) % 250, i % 250 + 1)
            for i in range(count)]
    uuids = ironic.create_nodes(
        [{'macs': m[:1], 'bmc_address': b} for m, b in zip(macs, bmcs)],
        workers=8)
    return {u: ramdisk.ipa_payload(m, b)
            for u, m, b in zip(uuids, macs, bmcs)}


def _start_all(api_urls, uuids):
    for i, uuid in enumerate(uuids):
        url = api_urls[i % len(api_urls)]
        resp = requests.post('%s/v1/introspection/%s' % (url, uuid),
                             timeout=30)
        assert resp.status_code == 202, resp.text
        status = requests.get('%s/v1/introspection/%s' % (
            api_urls[(i + 1) % len(api_urls)], uuid), timeout=30)
        assert status.status_code == 200, status.text


def _states(api_url, uuids):
    return {u: requests.get('%s/v1/introspection/%s' % (api_url, u),
                            timeout=30).json() for u in uuids}


def _wait_finished(api_url, uuids, timeout, database=None):
    last = {}

    def done():
        last.update(_states(api_url, [u for u in uuids if not last.get(
            u, {}).get('finished')]))
        return all(s.get('finished') for s in last.values())
    try:
        backends.wait_for(done, timeout, interval=1.0)
    except TimeoutError:
        raise AssertionError('not finished after %s s: %s\n%s' % (
            timeout, collections.Counter(s.get('state') for s in
                                         last.values()),
            _ledger(database, uuids))) from None
    return last


def _ledger(database, uuids):
    """Open requests and the last transitions, to explain a stall."""
    if database is None:
        return ''
    engine = sa.create_engine(database)
    with engine.connect() as conn:
        open_ = conn.execute(sa.text(
            "SELECT node_uuid, event, status, deliveries, updated_at FROM "
            "requests WHERE status IN ('pending', 'applied')")).all()
        last = conn.execute(sa.text(
            'SELECT node_uuid, actor, event, from_state, to_state, at FROM '
            'transitions ORDER BY id DESC LIMIT 15')).all()
    engine.dispose()
    return 'open requests:\n%s\nlast transitions:\n%s' % (
        '\n'.join(map(str, open_)), '\n'.join(map(str, last)))


def _history(database):
    engine = sa.create_engine(database)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            'SELECT node_uuid, request_id, event, from_state, to_state, '
            'generation FROM transitions ORDER BY id')).all()
    engine.dispose()
    return rows


def assert_each_strict_transition_applied_once(database, uuids):
    rows = [r for r in _history(database) if r.node_uuid in uuids]
    processing = collections.Counter(
        r.node_uuid for r in rows if r.to_state == 'processing')
    assert set(processing.values()) == {1}, processing.most_common(3)
    per_request = collections.Counter(
        (r.request_id, r.from_state, r.to_state) for r in rows
        if r.from_state != r.to_state)
    assert max(per_request.values()) == 1, per_request.most_common(3)
    generations = collections.defaultdict(list)
    for r in rows:
        generations[r.node_uuid].append(r.generation)
    assert all(g == sorted(set(g)) for g in generations.values())


def introspect(ironic, api_urls, nodes, timeout, database=None, start=True):
    """Play the nodes' ramdisks, start them (unless ``start`` is False:
    already started) and return their statuses once all are finished."""
    disks = ramdisk.Ramdisks(ironic.url, api_urls, nodes).start()
    try:
        if start:
            _start_all(api_urls, list(nodes))
        return _wait_finished(api_urls[0], list(nodes), timeout, database)
    finally:
        disks.stop()


def run_batch(ironic, the_cluster, count, timeout):
    nodes = _create_nodes(ironic, count)
    return nodes, introspect(ironic, the_cluster.api_urls, nodes, timeout,
                             the_cluster.database)


def assert_ironic_was_updated(ironic, uuids):
    for uuid in uuids:
        node = ironic.get_node(uuid)
        props = node['properties']
        assert (props['cpus'], props['memory_mb'], props['local_gb'],
                props['cpu_arch']) == ('4', '8192', '99', 'x86_64'), props
        assert node['power_state'] == 'power off'
        assert [p['pxe_enabled'] for p in ironic.ports(uuid)] == [True]


@pytest.fixture
def split_cluster(request, tmp_path, ironic, rabbit_url):
    database, coordination = request.getfixturevalue(request.param[0]), \
        request.param[1](request)
    the_cluster = cluster_mod.Cluster(tmp_path, database, rabbit_url,
                                      coordination, ironic.url)
    the_cluster.start()
    yield the_cluster
    codes = the_cluster.stop()
    print(the_cluster.logs(20))
    assert set(codes.values()) == {0}, codes


def _redis(request):
    return request.getfixturevalue('redis_url')


def _zookeeper(request):
    return request.getfixturevalue('zookeeper').url


@pytest.mark.parametrize('split_cluster', [
    ('pg_url', _redis), ('mariadb_url', _zookeeper)],
    ids=['postgresql-redis', 'mariadb-zookeeper'], indirect=True)
def test_two_hundred_nodes_go_from_start_to_finished_on_a_split_cluster(
        ironic, split_cluster):
    nodes, states = run_batch(ironic, split_cluster, NODES, timeout=300)
    errors = {u: s['error'] for u, s in states.items()
              if s['state'] != 'finished'}
    assert not errors, errors
    assert_ironic_was_updated(ironic, list(nodes)[:20])
    assert_each_strict_transition_applied_once(split_cluster.database,
                                               set(nodes))
