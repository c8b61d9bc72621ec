"""A three-controller site, as OpenStack sites run a control plane: each
controller (:mod:`site_lab`) runs a node of one RabbitMQ cluster (quorum
queues), a node of one Galera cluster behind its own HAProxy (one node
takes the writes, two are ``backup``), a member of one etcd cluster, and
(added by :mod:`site_harness`) an inspector-ha API and worker. The test
side (root namespace) reaches the database through an HAProxy of its own
with the same settings.

    site = Site(workdir).start()     # about a minute
    site.transport_url, site.new_database(), site.coordination_url(c)
    site.reboot(controller)          # its members start again and rejoin
    site.close()
"""

import concurrent.futures
import dataclasses

import backends
import site_lab as lab_mod
import site_members as members

ADMIN_TIMEOUT = 120


@dataclasses.dataclass
class RootHost:
    """The test's side of the bridge, as a controller-like host."""
    index: int = 0
    address: str = lab_mod.ROOT_ADDRESS
    prefix: tuple = ()


class Site:
    def __init__(self):
        self.lab = lab_mod.Lab(hosts=3)
        self.controllers = self.lab.controllers
        self.rabbit = [members.RabbitNode(c, self.controllers)
                       for c in self.controllers]
        self.galera = [members.GaleraNode(c, self.controllers,
                                          bootstrap=c.index == 1)
                       for c in self.controllers]
        self.etcd = [members.EtcdMember(c, self.controllers)
                     for c in self.controllers]
        self.fronts = [members.GaleraFront(c, self.controllers)
                       for c in self.controllers]
        self.root_front = members.GaleraFront(
            RootHost(), self.controllers,
            bind='127.0.0.1:%d' % backends.free_port())

    def start(self):
        self.lab.create()
        try:
            self._start_backends()
        except BaseException:
            self.close()
            raise
        return self

    def _start_backends(self):
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            etcd = [pool.submit(m.start) for m in self.etcd]
            rabbit = pool.submit(self._start_rabbit)
            galera = pool.submit(self._start_galera)
            for future in [*etcd, rabbit, galera]:
                future.result(ADMIN_TIMEOUT)
        for member in self.etcd:
            member.wait_ready()
        for front in [*self.fronts, self.root_front]:
            front.start()

    def _start_rabbit(self):
        first, *others = self.rabbit
        first.start()
        for node in others:
            node.start()
        backends.wait_for(lambda: first.cluster_size() == 3, 60,
                          interval=1, message='RabbitMQ nodes not clustered')

    def _start_galera(self):
        for node in self.galera:
            node.start()

    def restart_members(self, controller):
        """After a power loss: every member started again on its data; it
        rejoins its cluster."""
        i = controller.index - 1
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            started = [pool.submit(m.start) for m in (
                self.rabbit[i], self.galera[i], self.etcd[i])]
            for future in started:
                future.result(ADMIN_TIMEOUT)
        self.etcd[i].wait_ready()
        self.fronts[i].start()

    @property
    def transport_url(self):
        """Every RabbitMQ node, as ``[DEFAULT] transport_url`` names them
        (``etc/inspector-ha/three-controllers.conf``)."""
        return 'rabbit://%s/' % ','.join(
            'guest:guest@%s:%d' % (n.address, n.port) for n in self.rabbit)

    def coordination_url(self, controller):
        """The etcd member on ``controller`` (each controller's services
        use their own member: a cut-off controller loses it with them)."""
        return self.etcd[controller.index - 1].url

    def new_database(self):
        """A fresh database: (its URL from the test's side, from a
        controller's side)."""
        name = backends.unique_name()
        self._active_galera().admin('CREATE DATABASE %s' % name)
        user = '%s:%s' % (members.USER, members.USER)
        return ('mysql+pymysql://%s@%s/%s?charset=utf8mb4' % (
                    user, self.root_front.bind, name),
                'mysql+pymysql://%s@%s/%s?charset=utf8mb4' % (
                    user, members.GALERA_FRONT, name))

    def _active_galera(self):
        return next(n for n in self.galera if n.running)

    def close(self):
        for member in [self.root_front, *self.fronts, *self.etcd,
                       *self.galera, *self.rabbit]:
            member.kill()
        self.lab.close()
        for member in [self.root_front, *self.fronts, *self.etcd,
                       *self.galera, *self.rabbit]:
            member.close()
