"""The clustered backends' members, one per controller, each started in
its controller's namespace (:mod:`site_lab`) on its usual ports: a RabbitMQ
node, a MariaDB Galera node, an etcd member and, in front of Galera, an
HAProxy that writes to one node with the other two as ``backup`` (the
shipped ``etc/haproxy/galera.cfg``). ``start()`` after a power loss
starts the member again on its data, and it rejoins its cluster.
"""

import os
import pwd
import re
import shutil
import subprocess

import backends
import haproxy as haproxy_mod
import private
import servers

RABBIT_PORT = 5672
MYSQL_PORT = 3306
ETCD_PORT = 2379
#: Where a controller's services reach the database: its own HAProxy.
GALERA_FRONT = '127.0.0.1:%d' % MYSQL_PORT
GALERA_SHIPPED = haproxy_mod.SHIPPED.parent / 'galera.cfg'
COOKIE = 'inspectorhasitecookie'
#: The CLI itself: Debian's ``rabbitmqctl`` runs it as user rabbitmq,
#: with that user's cookie.
RABBITMQCTL = private.RABBIT_BIN.parent / 'rabbitmqctl'
USER = 'inspector'
#: The node's own lines; the shipped cluster settings follow them.
RABBIT_CONF = '''listeners.tcp.1 = {address}:{port}
loopback_users = none
cluster_formation.peer_discovery_backend = classic_config
{nodes}
'''
RABBIT_SHIPPED = (haproxy_mod.SHIPPED.parents[1] / 'rabbitmq' /
                  'three-controllers.conf')


class Member(servers.Server):
    """A server in controller ``controller``'s namespace."""

    def __init__(self, controller, peers):
        self.controller = controller
        self.peers = peers
        super().__init__(port=self.default_port)
        os.chmod(self.tmpdir, 0o755)

    @property
    def address(self):
        return self.controller.address

    def _spawn(self, argv, **kwargs):
        super()._spawn([*self.controller.prefix, *argv], **kwargs)


class RabbitNode(Member):
    """A node of one RabbitMQ cluster (long node names on the controllers'
    addresses, one Erlang cookie); a node started blank joins the others
    (classic peer discovery). Start the first alone, then the rest."""

    name = 'rabbitmq'
    default_port = RABBIT_PORT
    start_timeout = 90

    @property
    def node(self):
        return 'rabbit@%s' % self.address

    def _env(self):
        base = self.tmpdir
        nodes = '\n'.join(
            'cluster_formation.classic_config.nodes.%d = rabbit@%s' % (
                i + 1, peer.address) for i, peer in enumerate(self.peers))
        (base / 'rabbitmq.conf').write_text(RABBIT_CONF.format(
            address=self.address, port=self.port, nodes=nodes) +
            RABBIT_SHIPPED.read_text())
        (base / 'enabled_plugins').write_text('[].\n')
        (base / 'rabbitmq-env.conf').write_text('')
        cookie = base / '.erlang.cookie'
        if not cookie.exists():
            cookie.write_text(COOKIE)
            cookie.chmod(0o400)
        return dict(
            os.environ, HOME=str(base), RABBITMQ_NODENAME=self.node,
            RABBITMQ_USE_LONGNAME='true',
            RABBITMQ_CONF_ENV_FILE=str(base / 'rabbitmq-env.conf'),
            RABBITMQ_CONFIG_FILE=str(base / 'rabbitmq.conf'),
            RABBITMQ_ENABLED_PLUGINS_FILE=str(base / 'enabled_plugins'),
            RABBITMQ_MNESIA_BASE=str(base / 'mnesia'),
            RABBITMQ_LOG_BASE=str(base / 'log'), RABBITMQ_LOGS='-',
            RABBITMQ_PID_FILE=str(base / 'rabbit.pid'), ERL_FLAGS='')

    def _launch(self, timeout):
        self._spawn([str(private.RABBIT_BIN)], env=self._env(),
                    cwd=self.tmpdir)
        self._wait_ready(self._running, timeout)

    def ctl(self, *args, timeout=60):
        """``rabbitmqctl`` against this node, from its namespace."""
        return subprocess.run(
            [*self.controller.prefix, str(RABBITMQCTL), '-l', '-n', self.node,
             '--erlang-cookie', COOKIE, *args], env=self._env(),
            capture_output=True, text=True,
            timeout=timeout)

    def _running(self):
        return self.ctl('await_startup', '--timeout', '5',
                        timeout=20).returncode == 0

    def cluster_size(self):
        out = self.ctl('cluster_status', '--formatter', 'json').stdout
        found = re.search(r'"running_nodes":\[([^\]]*)\]', out)
        return len(found.group(1).split(',')) if found else 0


class GaleraNode(Member):
    """A MariaDB node of one Galera cluster (Debian's galera-4), run as
    ``mysql`` (rsync's state transfer writes as ``nobody`` when the server
    runs as root). The first node bootstraps the cluster once."""

    name = 'galera'
    default_port = MYSQL_PORT
    start_timeout = 120

    def __init__(self, controller, peers, bootstrap=False):
        super().__init__(controller, peers)
        self.datadir = self.tmpdir / 'data'
        self.rundir = self.tmpdir / 'run'
        self.socket = self.rundir / 'mysqld.sock'
        self._bootstrap = bootstrap

    def _launch(self, timeout):
        first = not self.datadir.exists()
        if first:
            self._install_db()
        peers = ','.join(peer.address for peer in self.peers)
        argv = [_mariadbd(), '--no-defaults', '--user=mysql',
                f'--datadir={self.datadir}', f'--socket={self.socket}',
                f'--bind-address={self.address}', f'--port={self.port}',
                f'--pid-file={self.rundir / "mysqld.pid"}',
                '--skip-name-resolve', '--innodb-buffer-pool-size=64M',
                '--innodb-flush-log-at-trx-commit=2',
                '--binlog-format=ROW', '--innodb-autoinc-lock-mode=2',
                '--wsrep-on=ON',
                '--wsrep-provider=/usr/lib/galera/libgalera_smm.so',
                f'--wsrep-cluster-address=gcomm://{peers}',
                f'--wsrep-node-address={self.address}',
                '--wsrep-cluster-name=inspector-ha-site',
                '--wsrep-sst-method=rsync']
        if first and self._bootstrap:
            argv.append('--wsrep-new-cluster')
        self._spawn(argv)
        self._wait_ready(self.synced, timeout)
        if first and self._bootstrap:
            self.admin(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{USER}'",
                       f"GRANT ALL ON *.* TO '{USER}'@'%'",
                       "CREATE USER 'haproxy'@'%'",
                       f'CREATE DATABASE {USER}')

    def _install_db(self):
        for path in (self.datadir, self.rundir):
            path.mkdir()
            shutil.chown(path, 'mysql', 'mysql')
        subprocess.run(
            [shutil.which('mariadb-install-db') or
             '/usr/bin/mariadb-install-db', '--no-defaults',
             f'--datadir={self.datadir}', '--user=mysql',
             '--auth-root-authentication-method=socket', '--skip-test-db'],
            capture_output=True, text=True, timeout=120, check=True)
        for path in self.datadir.rglob('*'):
            shutil.chown(path, 'mysql', 'mysql')

    def status(self, name):
        """A ``wsrep_*`` status variable, or None."""
        try:
            conn = private.root_connection(self.socket)
        except Exception:
            return None
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW STATUS LIKE %s", (name,))
                row = cur.fetchone()
                return row[1] if row else None
        finally:
            conn.close()

    def synced(self):
        return self.status('wsrep_local_state_comment') == 'Synced'

    def admin(self, *statements):
        private.run_as_root(self.socket, *statements)


class EtcdMember(Member):
    """A member of one 3-member etcd cluster; tooz reaches it through its
    v3 gateway (``etcd3+http``). The members of a new cluster must start
    together (each waits for a quorum)."""

    name = 'etcd'
    default_port = ETCD_PORT
    start_timeout = 60

    @property
    def url(self):
        return f'etcd3+http://{self.address}:{self.port}?api_version=v3'

    def _launch(self, timeout):
        client = f'http://{self.address}:{self.port}'
        peer = f'http://{self.address}:2380'
        cluster = ','.join(f'c{p.index}=http://{p.address}:2380'
                           for p in self.peers)
        self._spawn([shutil.which('etcd') or '/usr/bin/etcd',
                     '--name', f'c{self.controller.index}',
                     '--data-dir', str(self.tmpdir / 'data'),
                     '--listen-client-urls', client,
                     '--advertise-client-urls', client,
                     '--listen-peer-urls', peer,
                     '--initial-advertise-peer-urls', peer,
                     '--initial-cluster', cluster,
                     '--initial-cluster-token', 'inspector-ha-site',
                     '--initial-cluster-state', 'new'])

    def wait_ready(self, timeout=None):
        self._wait_ready(
            lambda: private.etcd_healthy(self.address, self.port),
            timeout or self.start_timeout)


class GaleraFront(Member):
    """HAProxy in a controller's namespace, in front of the Galera nodes:
    the shipped ``etc/haproxy/galera.cfg`` with the nodes filled in."""

    name = 'galera-front'
    default_port = MYSQL_PORT
    start_timeout = 10

    def __init__(self, controller, peers, bind=GALERA_FRONT):
        super().__init__(controller, peers)
        self.bind = bind

    def _launch(self, timeout):
        conf = self.tmpdir / 'haproxy.cfg'
        conf.write_text(galera_config(GALERA_SHIPPED.read_text(), self.bind,
                                      [p.address for p in self.peers]))
        self._spawn([haproxy_mod.binary(), '-db', '-f', str(conf)])
        host, port = self.bind.rsplit(':', 1)
        self._wait_ready(lambda: _listening(self.controller, int(port)),
                         timeout)


def galera_config(text, bind, nodes):
    """The shipped Galera front with our bind address and nodes (the
    first active, the others ``backup``), each line found once."""
    servers_text = ''.join(
        '    server galera%d %s:%d check%s\n' % (
            i + 1, node, MYSQL_PORT, ' backup' if i else '')
        for i, node in enumerate(nodes))
    for pattern, new in (
            (r'^    log /dev/log .*$', '    log stderr format raw local0'),
            (r'^    bind .*$', '    bind %s' % bind),
            (r'^(    server .*\n)+', servers_text)):
        text, count = re.subn(pattern, new, text, flags=re.M)
        assert count == 1, 'the shipped Galera front has no %r' % pattern
    return text


def _listening(controller, port):
    out = subprocess.run([*controller.prefix, 'ss', '-Hltn',
                          'sport = :%d' % port], capture_output=True,
                         text=True, timeout=10).stdout
    return bool(out.strip())


def _mariadbd():
    path = shutil.which('mariadbd') or shutil.which('mariadbd',
                                                    path='/usr/sbin')
    if path is None:
        raise backends.BackendUnavailable('mariadbd is not installed')
    try:
        pwd.getpwnam('mysql')
    except KeyError:
        raise backends.BackendUnavailable('no mysql user') from None
    return path
