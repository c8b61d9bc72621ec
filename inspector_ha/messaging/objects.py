"""Versioned objects carried on the queue.

A message names a request; the request itself (event, payload, attempt)
lives in SQL. Versioned objects let processes of mixed versions talk
during a rolling upgrade: a sender publishes at the version every live
member understands (:mod:`inspector_ha.coordination.releases`), and a
receiver that meets a newer version or an event it does not know puts
the message back for another member (:class:`NotUnderstood`).

0.1.0's consumer acknowledges and drops a message it cannot decode (its
request stays open in SQL and is re-driven from there), so a member never
publishes above what the oldest live member reads.
"""

from __future__ import annotations

import datetime
from collections.abc import Container
from typing import TYPE_CHECKING, Any, cast

from oslo_utils import timeutils
from oslo_versionedobjects import base
from oslo_versionedobjects import exception as ovo_exc
from oslo_versionedobjects import fields


class NotUnderstood(Exception):
    """A message of a newer release: put it back for another member."""


class InspectorObjectRegistry(base.VersionedObjectRegistry):
    pass


class InspectorObject(base.VersionedObject):
    OBJ_PROJECT_NAMESPACE = 'inspector_ha'


@InspectorObjectRegistry.register
class TransitionRequest(InspectorObject):
    """A request to apply ``event`` to node ``node_uuid``.

    Version 1.0 (0.1.0): request_id, node_uuid, event.
    Version 1.1 (0.2.0): sent_at, when it was published (the queue
    latency a receiver logs).
    """

    VERSION = '1.1'
    fields = {
        'request_id': fields.UUIDField(),
        'node_uuid': fields.StringField(),
        'event': fields.StringField(),
        'sent_at': fields.DateTimeField(nullable=True),
    }
    if TYPE_CHECKING:
        # The fields as mypy sees them (properties made from ``fields``).
        request_id: str
        node_uuid: str
        event: str
        sent_at: datetime.datetime | None

    def obj_make_compatible(self, primitive: dict[str, Any],
                            target_version: str) -> None:
        super().obj_make_compatible(primitive, target_version)
        if _tuple(target_version) < (1, 1):
            primitive.pop('sent_at', None)


@InspectorObjectRegistry.register
class WhitelistChange(InspectorObject):
    """The firewall white-list channel: ``op`` (add/remove) the MACs of
    node ``node_uuid``.

    Version 1.0 (0.2.0; 0.1.0 sent the same fields as RPC arguments).
    """

    VERSION = '1.0'
    fields = {
        'op': fields.StringField(),
        'node_uuid': fields.StringField(),
        'macs': fields.ListOfStringsField(),
    }
    if TYPE_CHECKING:
        op: str
        node_uuid: str
        macs: list[str]


@InspectorObjectRegistry.register
class BlacklistChange(InspectorObject):
    """The firewall black-list channel: ``op`` (add/remove) ``mac`` of
    Ironic port ``port_id``.

    Version 1.0 (0.2.0; 0.1.0 sent the same fields as RPC arguments).
    """

    VERSION = '1.0'
    fields = {
        'op': fields.StringField(),
        'port_id': fields.StringField(),
        'mac': fields.StringField(),
    }
    if TYPE_CHECKING:
        op: str
        port_id: str
        mac: str


@InspectorObjectRegistry.register
class BlacklistSnapshot(InspectorObject):
    """The firewall black-list channel: the whole black-list, ``ports``
    (``{port_id: mac}``), as the elected lister read it from Ironic.

    Version 1.0 (0.2.0).
    """

    VERSION = '1.0'
    fields = {
        'ports': fields.DictOfStringsField(),
    }
    if TYPE_CHECKING:
        ports: dict[str, str]


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split('.'))


def transition_request(request_id: str, node_uuid: str,
                       event: str) -> TransitionRequest:
    return TransitionRequest(request_id=request_id, node_uuid=node_uuid,
                             event=event, sent_at=timeutils.utcnow(True))


def to_primitive(obj: InspectorObject,
                 target_version: str | None = None) -> dict[str, Any]:
    """``obj`` as the primitive of ``target_version`` (default: its own)."""
    return obj.obj_to_primitive(target_version=target_version)


def from_primitive(primitive: dict[str, Any],
                   events: Container[str] | None = None
                   ) -> InspectorObject:
    """The object of ``primitive``; :class:`NotUnderstood` when it is of a
    newer version than this release has, or (given ``events``, the events
    this release knows) carries an event not among them. Anything else
    that cannot be decoded raises as it is."""
    try:
        obj = InspectorObject.obj_from_primitive(primitive)
    except ovo_exc.IncompatibleObjectVersion as exc:
        raise NotUnderstood(str(exc)) from exc
    if events is not None and getattr(obj, 'event', None) not in events:
        raise NotUnderstood('event %r is not known to this release'
                            % cast(TransitionRequest, obj).event)
    return obj
