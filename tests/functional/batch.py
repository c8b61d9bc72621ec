"""Batches of nodes for functional tests, benchmarks and the fault suite:
create them in Ironic with their simulated ramdisks, start them on a
cluster, wait for them to finish and check the history in SQL."""

import collections
import uuid as uuidlib

import requests
import sqlalchemy as sa

import backends
import ramdisk


def two_macs(i):
    """The two MACs of the ``i``-th node's simulated ramdisk."""
    return ['52:54:%02x:%02x:%02x:01' % (i >> 16, (i >> 8) & 255, i & 255),
            '52:54:%02x:%02x:%02x:02' % (i >> 16, (i >> 8) & 255, i & 255)]


def create_nodes(ironic, count, real_size=False):
    """Nodes with one PXE port each; their ramdisks report two NICs (and
    post as much as a real agent with ``real_size``)."""
    seed = uuidlib.uuid4().int % 60000
    macs = [two_macs(seed * 256 + i) for i in range(count)]
    bmcs = ['198.51.%d.%d' % ((seed + i) % 250, i % 250 + 1)
            for i in range(count)]
    uuids = ironic.create_nodes(
        [{'macs': m[:1], 'bmc_address': b} for m, b in zip(macs, bmcs)],
        workers=8)
    return {u: ramdisk.ipa_payload(m, b, real_size=real_size)
            for u, m, b in zip(uuids, macs, bmcs)}


def start_all(api_urls, uuids):
    for i, uuid in enumerate(uuids):
        url = api_urls[i % len(api_urls)]
        resp = requests.post('%s/v1/introspection/%s' % (url, uuid),
                             timeout=30)
        assert resp.status_code == 202, resp.text
        status = requests.get('%s/v1/introspection/%s' % (
            api_urls[(i + 1) % len(api_urls)], uuid), timeout=30)
        assert status.status_code == 200, status.text


def states(api_url, uuids):
    return {u: requests.get('%s/v1/introspection/%s' % (api_url, u),
                            timeout=30).json() for u in uuids}


def wait_finished(api_url, uuids, timeout, database=None):
    last = {}

    def done():
        last.update(states(api_url, [u for u in uuids if not last.get(
            u, {}).get('finished')]))
        return all(s.get('finished') for s in last.values())
    try:
        backends.wait_for(done, timeout, interval=1.0)
    except TimeoutError:
        raise AssertionError('not finished after %s s: %s\n%s' % (
            timeout, collections.Counter(s.get('state') for s in
                                         last.values()),
            ledger(database, uuids))) from None
    return last


def ledger(database, uuids):
    """Open requests and the last transitions, to explain a stall."""
    if database is None:
        return ''
    open_ = query(database, "SELECT node_uuid, event, status, deliveries, "
                            "updated_at FROM requests WHERE status IN "
                            "('pending', 'applied')")
    last = query(database, 'SELECT node_uuid, actor, event, from_state, '
                           'to_state, at FROM transitions ORDER BY id DESC '
                           'LIMIT 15')
    return 'open requests:\n%s\nlast transitions:\n%s' % (
        '\n'.join(map(str, open_)), '\n'.join(map(str, last)))


def history(database):
    """Every committed transition, in order."""
    return query(database, 'SELECT node_uuid, request_id, event, '
                           'from_state, to_state, generation FROM '
                           'transitions ORDER BY id')


def assert_each_strict_transition_applied_once(database, uuids):
    rows = [r for r in history(database) if r.node_uuid in uuids]
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
            start_all(api_urls, list(nodes))
        return wait_finished(api_urls[0], list(nodes), timeout, database)
    finally:
        disks.stop()


def run_batch(ironic, the_cluster, count, timeout):
    nodes = create_nodes(ironic, count)
    return nodes, introspect(ironic, the_cluster.api_urls, nodes, timeout,
                             the_cluster.database)


def assert_ironic_was_updated(ironic, uuids):
    for uuid in uuids:
        node = ironic.get_node(uuid)
        props = node['properties']
        assert (props['cpus'], props['memory_mb'], props['local_gb'],
                props['cpu_arch']) == ('4', '8192', '99', 'x86_64'), props
        assert_powered_off(ironic, node)
        assert [p['pxe_enabled'] for p in ironic.ports(uuid)] == [True]


def assert_powered_off(ironic, node, timeout=30):
    """The service asked Ironic to power ``node`` (as read once it was
    finished) off; Ironic's conductor does that in the background after
    the request returns, so wait for the power state itself."""
    assert 'power off' in (node['power_state'],
                           node['target_power_state']), node
    backends.wait_for(
        lambda: ironic.power_state(node['uuid']) == 'power off', timeout,
        interval=0.2, message='node %s not powered off' % node['uuid'])


def query(database, sql, **params):
    """Rows of ``sql`` (with ``:name`` ``params``) on ``database``."""
    engine = sa.create_engine(database)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(sql), params).all()
    engine.dispose()
    return rows


def held_by(database, member_prefix, event):
    """Requests a worker applied but had not finished."""
    return {r.id for r in query(
        database, "SELECT r.id FROM requests r JOIN transitions t ON "
        "t.request_id = r.id WHERE r.status = 'applied' AND r.event = :e "
        "AND t.actor LIKE :actor", e=event, actor=member_prefix + '%')}


def requests_by_id(database, ids):
    """The request rows of ``ids``, by id."""
    rows = query(database, 'SELECT id, node_uuid, status, deliveries '
                           'FROM requests')
    return {r.id: r for r in rows if r.id in ids}


def leaders(database):
    """The leaders table: each task's row, by task name."""
    return {r.name: r for r in query(
        database, 'SELECT name, epoch, holder FROM leaders')}
