"""The firewall's pub-sub channels on oslo.messaging (RPC fan-out).

Two channels, as the HA firewall of doc/design.md says: the white-list
(``add``/``remove`` of a node's MACs, announced by workers when an
introspection starts and ends) and the black-list (``add``/``remove`` of a
``(port id, MAC)``, announced by the elected port watcher, and the whole
list, announced by the elected lister; see
:mod:`inspector_ha.firewall.watcher`). Ironic's own port notifications
cannot feed it: Ironic 39 fails to build their payload and sends none.

Every member receives the black-list (topic :data:`TOPIC`); only the
firewall leader, the one member that keeps a white-list, receives the
white-list (topic :data:`WHITE_TOPIC`, served while it leads:
:class:`LeaderChannel`), so a white-list change costs one delivery
instead of one per member. A new leader subscribes when elected, and
reads the white-list from the store ``open_lease`` later. While a
0.1.0 member lives, white-list changes go on :data:`TOPIC` to all, as
0.1.0 sends and reads them. While no live member runs a PXE firewall
(:meth:`inspector_ha.coordination.releases.Releases.firewall_anywhere`),
none is sent: a firewall member reads the white-list from the store once
every member counts it (``catch_up`` of
:class:`inspector_ha.firewall.manager.Firewall`).

Announcing is best effort: the periodic Ironic sync and the store
polling repair anything lost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import oslo_messaging as messaging

from inspector_ha.coordination import releases as releases_mod
from inspector_ha.firewall import lists as lists_mod
from inspector_ha.messaging import objects

LOG = logging.getLogger(__name__)
TOPIC = 'inspector_ha_firewall'
#: The white-list channel (0.2.0): only the firewall leader serves it.
WHITE_TOPIC = 'inspector_ha_firewall_white'
#: The release from which announcements are versioned objects (RPC API
#: 1.1, ``announce``) and white-list changes go on :data:`WHITE_TOPIC`;
#: before it, the same fields as arguments (1.0), all on :data:`TOPIC`.
OBJECTS_SINCE = '0.2.0'
#: Seconds between tries to serve the white-list channel.
START_RETRY = 1.0
#: Seconds :meth:`Bus.close` waits for servers stopping in the background.
STOP_WAIT = 10.0


class Bus:
    """Sends announcements; ``serve`` receives them into ``Lists``."""

    def __init__(self, conf: Any, member_id: str,
                 releases: releases_mod.Releases | None = None) -> None:
        self._conf = conf
        self._member = member_id
        self._releases = releases
        self._transport = messaging.get_rpc_transport(conf)
        self._client = self._fanout(TOPIC)
        self._white_client = self._fanout(WHITE_TOPIC)
        self._servers: list[Any] = []
        self._stopping: list[threading.Thread] = []
        self._servers_lock = threading.Lock()

    def _fanout(self, topic: str) -> Any:
        return messaging.get_rpc_client(
            self._transport, messaging.Target(topic=topic, fanout=True),
            retry=self._conf.queue.retry_count)

    def whitelist(self, op: str, node_uuid: str,
                  macs: Iterable[str]) -> None:
        """Announce a white-list change, unless no live member runs a
        PXE firewall (none keeps a white-list; one that comes reads it
        from the store once it leads)."""
        release = self._release()
        if (self._releases is not None and
                not self._releases.firewall_anywhere()):
            return
        self._cast('whitelist', objects.WhitelistChange, self._white_client,
                   release, op=op, node_uuid=node_uuid, macs=sorted(macs))

    def blacklist(self, op: str, port_id: str, mac: str) -> None:
        self._cast('blacklist', objects.BlacklistChange, self._client,
                   self._release(), op=op, port_id=port_id, mac=mac)

    def blacklist_snapshot(self, ports: Mapping[str, str]) -> bool:
        """Announce the whole black-list (``{port_id: mac}``). False when
        nothing was sent: lost, or a member of a release without
        snapshots is live (every member then lists Ironic itself)."""
        release = self._release()
        if not _objects_understood(release):
            return False
        try:
            self._announce(objects.BlacklistSnapshot(ports=dict(ports)),
                           self._client, release)
        except Exception as exc:
            LOG.warning('Black-list snapshot of %d ports lost (each member '
                        'lists Ironic itself when none comes): %s',
                        len(ports), exc)
            return False
        return True

    def _release(self) -> str | None:
        """The effective release (one look at the group, waited for as
        :meth:`releases_mod.Releases.effective` waits); None: this
        release's own."""
        return None if self._releases is None else self._releases.effective()

    def _announce(self, change: objects.InspectorObject, client: Any,
                  release: str | None) -> None:
        client.prepare(version='1.1').cast(
            {}, 'announce', change=objects.to_primitive(
                change, None if release is None else
                releases_mod.object_version_in(release, change.obj_name())))

    def _cast(self, method: str, cls: type[objects.InspectorObject],
              client: Any, release: str | None, **kwargs: Any) -> None:
        """A versioned object on ``client``'s topic once every live member
        reads one (``release``); until then the previous release's call
        (``method`` with arguments) on :data:`TOPIC`."""
        try:
            if _objects_understood(release):
                self._announce(cls(**kwargs), client, release)
            else:
                self._client.cast({}, method, **kwargs)
        except Exception as exc:
            LOG.warning('Firewall announcement %s %s lost (the periodic '
                        'sync repairs it): %s', method, kwargs, exc)

    def serve(self, lists: lists_mod.Lists) -> None:
        """Receive the black-list channel (and the white-list changes a
        0.1.0 member sends or is sent) into ``lists``."""
        self._serve(TOPIC, lists)

    def serve_whitelist(self, lists: lists_mod.Lists,
                        until: threading.Event) -> Any:
        """Receive the white-list channel into ``lists`` until ``until`` is
        set (what comes later is dropped); returns what :meth:`stop`
        takes. Through :class:`LeaderChannel`, not on the firewall
        thread: with RabbitMQ down, this waits for it."""
        return self._serve(WHITE_TOPIC, lists, until)

    def _serve(self, topic: str, lists: lists_mod.Lists,
               until: threading.Event | None = None) -> Any:
        server = messaging.get_rpc_server(
            self._transport, messaging.Target(topic=topic,
                                              server=self._member),
            [_Receiver(lists, self._conf.pxe_filter, until)],
            executor='threading')
        server.start()
        with self._servers_lock:
            self._servers.append(server)
        return server

    def stop(self, server: Any) -> None:
        """Stop receiving on ``server`` (from :meth:`serve_whitelist`)."""
        with self._servers_lock:
            if server not in self._servers:
                return
            self._servers.remove(server)
        _stop(server)

    def stop_in_background(self, server: Any) -> None:
        """:meth:`stop` on a thread of its own; :meth:`close` waits for it
        (at most :data:`STOP_WAIT`), so the server's queue is deleted
        before the transport goes."""
        thread = threading.Thread(target=self.stop, args=(server,),
                                  name='firewall-channel-stop', daemon=True)
        with self._servers_lock:
            self._stopping = [t for t in self._stopping if t.is_alive()]
            self._stopping.append(thread)
            thread.start()

    def close(self) -> None:
        with self._servers_lock:
            servers, self._servers = self._servers, []
            stopping, self._stopping = self._stopping, []
        for server in servers:
            _stop(server)
        deadline = time.monotonic() + STOP_WAIT
        for thread in stopping:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._transport.cleanup()


def _stop(server: Any) -> None:
    try:
        server.stop()
        server.wait()
    except Exception as exc:
        LOG.warning('Stopping a firewall listener: %s', exc)


class LeaderChannel:
    """The white-list channel of one leadership term, started and stopped
    off the firewall thread, which holds the leadership meanwhile:
    starting waits for RabbitMQ as long as it is down (a term that ends
    meanwhile leaves its thread waiting, and the server it then makes is
    stopped at once), and stopping waits for the server's threads (about
    1 s; up to 5 s on RabbitMQ). :attr:`started` is set once it serves;
    changes delivered after :meth:`close` are dropped."""

    def __init__(self, bus: Bus, lists: lists_mod.Lists) -> None:
        self._bus = bus
        self._lists = lists
        self._closed = threading.Event()
        self.started = threading.Event()
        self._lock = threading.Lock()
        self._server: Any = None
        threading.Thread(target=self._start, name='whitelist-channel',
                         daemon=True).start()

    def _start(self) -> None:
        failures = 0
        while not self._closed.is_set():
            try:
                server = self._bus.serve_whitelist(self._lists, self._closed)
            except Exception as exc:
                failures += 1
                LOG.log(logging.WARNING if failures == 1 else logging.DEBUG,
                        'Cannot receive white-list changes (the leader '
                        'reads the store every [pxe_filter] '
                        'whitelist_period); trying again every %s s: %s',
                        START_RETRY, exc)
                self._closed.wait(START_RETRY)
                continue
            with self._lock:
                self._server, closed = server, self._closed.is_set()
            self.started.set()
            if closed:
                self._bus.stop(server)
            return

    def close(self) -> None:
        """Drop what comes from now on; stop the server in the
        background."""
        with self._lock:
            self._closed.set()
            server = self._server
        if server is not None:
            self._bus.stop_in_background(server)


class _Receiver:
    """The RPC endpoint: announcements into the local lists."""

    target = messaging.Target(version='1.1')

    def __init__(self, lists: lists_mod.Lists, opts: Any,
                 until: threading.Event | None = None) -> None:
        self._lists = lists
        self._opts = opts
        self._until = until

    def announce(self, ctxt: Any, change: Any) -> None:
        """RPC 1.1: a :mod:`objects` change of either list."""
        if self._until is not None and self._until.is_set():
            return
        try:
            change = objects.from_primitive(change)
        except objects.NotUnderstood as exc:
            # NOTE: a fan-out reaches every member; nothing to put back.
            # The periodic sync repairs what this member missed.
            LOG.warning('Ignoring a firewall announcement of a newer '
                        'release: %s', exc)
            return
        if isinstance(change, objects.WhitelistChange):
            self.whitelist(ctxt, change.op, change.node_uuid, change.macs)
        elif isinstance(change, objects.BlacklistChange):
            self.blacklist(ctxt, change.op, change.port_id, change.mac)
        elif isinstance(change, objects.BlacklistSnapshot):
            if self._opts.blacklist_pubsub:
                self._lists.replace_black(change.ports, announced=True)

    def whitelist(self, ctxt: Any, op: str, node_uuid: str,
                  macs: Iterable[str]) -> None:
        if self._opts.whitelist_pubsub:
            self._lists.white(op, node_uuid, macs)

    def blacklist(self, ctxt: Any, op: str, port_id: str,
                  mac: str) -> None:
        if self._opts.blacklist_pubsub:
            self._lists.black(op, port_id, mac)


def _objects_understood(release: str | None) -> bool:
    """Whether every live member reads announcements as objects."""
    return release is None or releases_mod.is_at_least(release,
                                                        OBJECTS_SINCE)
