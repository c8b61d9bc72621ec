"""A split cluster behind the shipped HAProxy, on a PostgreSQL database,
a RabbitMQ vhost and a Redis namespace of its own."""

import backends
import cluster as cluster_mod
import haproxy


class PrivateBackends:
    """A PostgreSQL database, a RabbitMQ vhost and a Redis namespace of
    one test (``obtain``: the ``obtain_backend`` fixture); ``remove()``
    drops them."""

    def __init__(self, obtain):
        self.database = obtain(backends.postgres_url)
        self.transport = obtain(backends.rabbit_url)
        self.coordination = obtain(backends.redis_url)

    def remove(self):
        backends.drop_database(self.database)
        backends.delete_vhost(self.transport)
        backends.flush_redis_namespace(self.coordination)


class BehindHAProxy:
    """``cluster`` (started), ``proxy`` and the ``url`` clients call;
    ``close()`` stops both, removes the backends' data and asserts that
    every process exited 0 on SIGTERM.

    :param obtain: the ``obtain_backend`` fixture (skips, or fails in CI,
        when a backend is missing).
    :param port: HAProxy's port, if the caller must know it first.
    :param options: :class:`cluster.Cluster`'s keyword arguments.
    """

    def __init__(self, tmp_path, ironic_url, obtain, port=None, **options):
        haproxy.binary()  # before the cluster: a skip leaves none
        self._backends = PrivateBackends(obtain)
        self.cluster = cluster_mod.Cluster(
            tmp_path, self._backends.database, self._backends.transport,
            self._backends.coordination, ironic_url, **options).start()
        self.proxy = haproxy.HAProxy(self.cluster.api_urls,
                                     port=port).start()
        self.url = self.proxy.url

    def close(self):
        self.proxy.stop()
        codes = self.cluster.stop()
        self._backends.remove()
        assert set(codes.values()) == {0}, codes
