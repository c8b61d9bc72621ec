"""The backend fixtures give working, private, real backends."""

import pytest
import sqlalchemy
from tooz import coordination

import backends
import servers


def _roundtrip_a_row(url):
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql('CREATE TABLE probe (id INTEGER PRIMARY KEY, '
                                 'name VARCHAR(64))')
            conn.exec_driver_sql("INSERT INTO probe VALUES (1, 'ünïcode ✓')")
        with engine.connect() as conn:
            return conn.exec_driver_sql('SELECT name FROM probe').scalar_one()
    finally:
        engine.dispose()


def _database_exists(url, query):
    url = sqlalchemy.engine.make_url(url)
    admin = backends._admin_engine(url, 'postgres' if url.get_backend_name()
                                   == 'postgresql' else 'mysql')
    try:
        with admin.connect() as conn:
            row = conn.exec_driver_sql(query, (url.database,)).first()
            return row is not None
    finally:
        admin.dispose()


def test_a_fresh_postgres_database_accepts_connections(pg_url):
    assert pg_url.startswith('postgresql+psycopg2://postgres@127.0.0.1:5432/')
    assert _roundtrip_a_row(pg_url) == 'ünïcode ✓'


def test_a_fresh_mariadb_database_accepts_connections(mariadb_url):
    assert mariadb_url.startswith('mysql+pymysql://root@127.0.0.1:3306/')
    assert mariadb_url.endswith('?charset=utf8mb4')
    assert _roundtrip_a_row(mariadb_url) == 'ünïcode ✓'


@pytest.mark.parametrize('fixture, query', [
    ('pg_url', 'SELECT 1 FROM pg_database WHERE datname = %s'),
    ('mariadb_url', 'SELECT 1 FROM information_schema.schemata '
                    'WHERE schema_name = %s'),
])
def test_dropping_a_database_ends_its_open_sessions_and_removes_it(
        fixture, query, request):
    url = request.getfixturevalue(fixture)
    engine = sqlalchemy.create_engine(url)
    conn = engine.connect()  # still open while the database is dropped
    conn.exec_driver_sql('SELECT 1')
    backends.drop_database(url)
    conn.invalidate()  # the server ended that session: no rollback possible
    engine.dispose()
    assert not _database_exists(url, query)


def test_each_call_gives_a_different_database(pg_url):
    other = backends.postgres_url()
    try:
        assert other != pg_url
    finally:
        backends.drop_database(other)


def test_an_unreachable_postgres_raises_a_clear_error(monkeypatch):
    port = backends.free_port()
    monkeypatch.setenv('INSPECTOR_HA_TEST_PG',
                       f'postgresql+psycopg2://postgres@127.0.0.1:{port}')
    with pytest.raises(RuntimeError, match='(?s)PostgreSQL.*pg_ctlcluster'):
        backends.postgres_url()


def _lock_is_exclusive(url, lock_name=b'probe-lock'):
    first = coordination.get_coordinator(url, b'member-a')
    second = coordination.get_coordinator(url, b'member-b')
    first.start(start_heart=True)
    second.start(start_heart=True)
    try:
        held = first.get_lock(lock_name)
        contender = second.get_lock(lock_name)
        assert held.acquire(blocking=False)
        assert not contender.acquire(blocking=False)
        held.release()
        assert contender.acquire(blocking=5)
        contender.release()
        return True
    finally:
        first.stop()
        second.stop()


def test_a_tooz_coordinator_takes_an_exclusive_lock_on_redis(redis_url):
    assert _lock_is_exclusive(redis_url)


def test_the_redis_namespace_prefixes_every_tooz_key(redis_url):
    import redis
    namespace = redis_url.rsplit('namespace=', 1)[1]
    coordinator = coordination.get_coordinator(redis_url, b'member-a')
    coordinator.start()
    try:
        coordinator.create_group(b'probe-group').get()
        client = redis.Redis.from_url(backends.REDIS_BASE)
        assert client.keys(f'{namespace}*')
        client.close()
    finally:
        coordinator.stop()


def test_a_tooz_coordinator_takes_an_exclusive_lock_on_the_private_zookeeper(
        zookeeper):
    assert zookeeper.url.startswith('zookeeper://127.0.0.1:')
    assert _lock_is_exclusive(zookeeper.url)


def test_a_killed_private_zookeeper_can_be_started_again(zookeeper):
    with servers.ZooKeeper() as other:
        assert other.port != zookeeper.port
        other.kill()
        assert not other.running
        other.start()
        assert other.four_letter('ruok') == 'imok'
        tmpdir = other.tmpdir
    assert not other.running
    assert not tmpdir.exists()


def test_a_notification_makes_a_round_trip_through_the_rabbit_vhost(
        rabbit_url):
    import oslo_messaging
    from oslo_config import cfg

    received = []

    class Endpoint:
        def info(self, ctxt, publisher_id, event_type, payload, metadata):
            received.append((publisher_id, event_type, payload))

    topic = backends.unique_name('probe')
    transport = oslo_messaging.get_notification_transport(cfg.CONF,
                                                          url=rabbit_url)
    listener = oslo_messaging.get_notification_listener(
        transport, [oslo_messaging.Target(topic=topic)], [Endpoint()])
    listener.start()
    try:
        notifier = oslo_messaging.Notifier(
            transport, publisher_id='probe.host', driver='messaging',
            topics=[topic])
        notifier.info({}, 'baremetal.introspection.probe', {'answer': 42})
        backends.wait_for(lambda: received, 15, message='no notification')
    finally:
        listener.stop()
        listener.wait()
        transport.cleanup()
    assert received == [('probe.host', 'baremetal.introspection.probe',
                         {'answer': 42})]


def test_ironic_creates_a_manageable_node_whose_ports_carry_its_macs(ironic):
    macs = ['52:54:00:12:34:01', '52:54:00:12:34:02']
    uuid = ironic.create_node(name=backends.unique_name('node'), macs=macs,
                              bmc_address='192.0.2.10')
    try:
        node = ironic.get_node(uuid)
        assert node['provision_state'] == 'manageable'
        assert node['driver'] == 'fake-hardware'
        assert node['driver_info']['ipmi_address'] == '192.0.2.10'
        ports = ironic.ports(uuid)
        assert sorted(p['address'] for p in ports) == macs
        assert all(p['pxe_enabled'] for p in ports)
        assert all(p['node_uuid'] == uuid for p in ports)
    finally:
        ironic.delete_node(uuid)


def test_ironic_looks_nodes_up_by_mac_like_the_inspector_does(ironic):
    uuid = ironic.create_node(macs=['52:54:00:12:34:03'])
    try:
        found = ironic.request(
            'GET', '/v1/ports?address=52:54:00:12:34:03&fields=uuid,node_uuid')
        assert [p['node_uuid'] for p in found['ports']] == [uuid]
    finally:
        ironic.delete_node(uuid)

