"""The fault suite's harness (``tests/fault/harness.py``) on a
three-controller :class:`site.Site`: an API and a worker on each
controller, the shipped HAProxy in front of the APIs on the test's side,
a real Ironic reached through a proxy on the bridge, and the batch,
ramdisks, driver and history checker of the fault suite unchanged.

A controller that lost its power is ``down``: the supervisor restarts
nothing on it until :meth:`SiteHarness.reboot` does.
"""

import configparser
import pathlib

import sqlalchemy as sa

import backends
import batch
import cluster as cluster_mod
import harness as harness_mod
import haproxy as haproxy_mod
import site_lab as lab_mod
import proxy as proxy_mod

API_PORT = 5050
SHIPPED_CONF = (pathlib.Path(__file__).resolve().parents[2] / 'etc' /
                'inspector-ha' / 'three-controllers.conf')
#: Quorum queues, as the sites this models run them.
QUORUM = {'oslo_messaging_rabbit': {'rabbit_quorum_queue': 'true'}}


class SiteCluster(cluster_mod.Cluster):
    """An API and a worker per controller, each with its controller's
    database front and etcd member."""

    def __init__(self, workdir, site, database, ironic_url, conf):
        self.site = site
        super().__init__(workdir, database[0], site.transport_url,
                         site.coordination_url(site.controllers[0]),
                         ironic_url, apis=0, workers=0, conf=conf)
        self._controller_db = database[1]

    def own_conf(self, controller):
        """The shipped three-controller options as ``controller``'s (its
        address, its etcd member), on this test's database."""
        conf = shipped_conf(self.site.controllers, controller)
        conf['database']['connection'] = self._controller_db
        return conf

    def start(self):
        super().start()
        for controller in self.site.controllers:
            self.start_on(controller)
        for api in self.apis:
            backends.wait_for(lambda: cluster_mod._answers(api.url), 60,
                              message='API %s did not answer' % api.url)
        return self

    def start_on(self, controller):
        """The API and the worker of ``controller``."""
        self.add_worker(self.own_conf(controller), prefix=controller.prefix)
        self.add_site_api(controller)

    def add_site_api(self, controller, name=None):
        name = name or 'api-%d' % len(self.apis)
        conf = cluster_mod._merge(self.own_conf(controller), {'DEFAULT': {
            'listen_port': API_PORT}})
        proc = self._spawn('inspector-ha-api', name, conf,
                           prefix=controller.prefix)
        proc.url = 'http://%s:%d' % (controller.address, API_PORT)
        self.apis.append(proc)
        return proc

    def on(self, controller):
        """The processes started on ``controller``, live or not."""
        prefix = list(controller.prefix)
        return [p for p in self.apis + self.workers
                if list(p.prefix) == prefix]

    @property
    def every_api_url(self):
        return ['http://%s:%d' % (c.address, API_PORT)
                for c in self.site.controllers]


class SiteSupervisor(harness_mod.Supervisor):
    """Restarts a process that exits, on its own controller, unless that
    controller is down."""

    def __init__(self, the_cluster, down):
        super().__init__(the_cluster)
        self._down = down

    def _restart(self, proc):
        controller = next(c for c in self._cluster.site.controllers
                          if list(c.prefix) == list(proc.prefix))
        if controller.index in self._down:
            return
        if proc in self._cluster.workers:
            self._cluster.add_worker(proc.own, prefix=proc.prefix)
        else:
            self._cluster.add_site_api(controller)


class SiteHarness(harness_mod.Harness):
    """:class:`harness.Harness` on ``site``; ``conf`` adds options to the
    production defaults (with quorum queues)."""

    def __init__(self, workdir, ironic, site, nodes=150, conf=None):
        self.ironic = ironic
        self.site = site
        self.servers = None
        database = site.new_database()
        self.database = database[0]
        self.ironic_proxy = proxy_mod.Proxy(
            harness_mod._port(ironic.url),
            listen_host=lab_mod.ROOT_ADDRESS).start()
        self.down = set()
        topic = {'queue': {'topic': backends.unique_name('requests')}}
        self.cluster = SiteCluster(
            workdir, site, database, 'http://%s:%d' % (
                lab_mod.ROOT_ADDRESS, self.ironic_proxy.port),
            cluster_mod._merge(
                cluster_mod._merge(harness_mod._defaults(), topic),
                cluster_mod._merge(QUORUM, conf or {})))
        self.count = nodes
        self.nodes = {}
        self.silent = None
        self.haproxy = None
        self.proxy = self.cutoff = self.cut_off = None
        self.proxied = self.freeze_after = self.failpoint = None
        self.freeze_mark = pathlib.Path(workdir) / 'frozen-node'
        self.supervisor = SiteSupervisor(self.cluster, self.down)
        self.engine = sa.create_engine(self.database, pool_pre_ping=True)
        self.stopped = False

    def start(self):
        creating = harness_mod.Background(batch.create_nodes, self.ironic,
                                          self.count)
        self.cluster.start()
        self.haproxy = haproxy_mod.HAProxy(
            self.cluster.every_api_url).start()
        self.nodes = creating.result(600)
        self._wait_started(self.cluster.workers, True)
        self.supervisor.start()
        return self

    def stop(self):
        codes = super().stop()
        self.ironic_proxy.close()
        return codes

    def reboot(self, controller):
        """Start the members and the service of ``controller`` again after
        a power loss."""
        self.site.restart_members(controller)
        self.down.discard(controller.index)
        self.cluster.start_on(controller)


def shipped_conf(controllers, controller):
    """``etc/inspector-ha/three-controllers.conf`` as ``controller``'s:
    its controller 1 is ``controller``, the other two its peers; the
    placeholders are the site's credentials."""
    others = [c for c in controllers if c is not controller]
    text = SHIPPED_CONF.read_text()
    for shipped, ours in zip(('192.0.2.21', '192.0.2.22', '192.0.2.23'),
                             [controller, *others]):
        text = text.replace(shipped, ours.address)
    text = text.replace('inspector:RABBIT_PASSWORD', 'guest:guest')
    # NOTE: [DEFAULT] read as a section like any other, not inherited.
    parser = configparser.ConfigParser(interpolation=None,
                                       default_section='')
    parser.read_string(text)
    return {section: dict(parser[section]) for section in parser.sections()}
