"""The firewall's pub-sub channels on oslo.messaging (RPC fan-out).

Two channels, as the HA design says: the white-list (``add``/``remove``
of a node's MACs, announced by workers when an introspection starts and
ends) and the black-list (``add``/``remove`` of a ``(port id, MAC)``),
announced by the elected port watcher
(:mod:`inspector_ha.firewall.watcher`). Ironic's own port notifications
cannot feed it: Ironic 39 fails to build their payload and sends none.

Announcing is best effort: the periodic Ironic sync and the store
polling repair anything lost.
"""

import logging

import oslo_messaging as messaging

LOG = logging.getLogger(__name__)
TOPIC = 'inspector_ha_firewall'


class Bus:
    """Sends announcements; ``serve`` receives them into ``Lists``."""

    def __init__(self, conf, member_id):
        self._conf = conf
        self._member = member_id
        self._transport = messaging.get_rpc_transport(conf)
        self._client = messaging.get_rpc_client(
            self._transport, messaging.Target(topic=TOPIC, fanout=True),
            retry=conf.queue.retry_count)
        self._servers = []

    def whitelist(self, op, node_uuid, macs):
        self._cast('whitelist', op=op, node_uuid=node_uuid,
                   macs=sorted(macs))

    def blacklist(self, op, port_id, mac):
        self._cast('blacklist', op=op, port_id=port_id, mac=mac)

    def _cast(self, method, **kwargs):
        try:
            self._client.cast({}, method, **kwargs)
        except Exception as exc:
            LOG.warning('Firewall announcement %s %s lost (the periodic '
                        'sync repairs it): %s', method, kwargs, exc)

    def serve(self, lists):
        """Receive both channels into ``lists``."""
        server = messaging.get_rpc_server(
            self._transport, messaging.Target(topic=TOPIC,
                                              server=self._member),
            [_Receiver(lists, self._conf.pxe_filter)], executor='threading')
        self._servers.append(server)
        server.start()

    def close(self):
        for server in self._servers:
            try:
                server.stop()
                server.wait()
            except Exception as exc:
                LOG.warning('Stopping a firewall listener: %s', exc)
        self._transport.cleanup()


class _Receiver:
    """The RPC endpoint: announcements into the local lists."""

    target = messaging.Target(version='1.0')

    def __init__(self, lists, opts):
        self._lists = lists
        self._opts = opts

    def whitelist(self, ctxt, op, node_uuid, macs):
        if self._opts.whitelist_pubsub:
            self._lists.white(op, node_uuid, macs)

    def blacklist(self, ctxt, op, port_id, mac):
        if self._opts.blacklist_pubsub:
            self._lists.black(op, port_id, mac)
