"""Versioned objects carried on the queue.

A message names a request; the request itself (event, payload, attempt)
lives in SQL. Versioned objects let processes of mixed versions talk
during a rolling upgrade.
"""

from oslo_versionedobjects import base
from oslo_versionedobjects import fields


class InspectorObjectRegistry(base.VersionedObjectRegistry):
    pass


class InspectorObject(base.VersionedObject):
    OBJ_PROJECT_NAMESPACE = 'inspector_ha'


@InspectorObjectRegistry.register
class TransitionRequest(InspectorObject):
    """A request to apply ``event`` to node ``node_uuid``.

    Version 1.0: request_id, node_uuid, event.
    """

    VERSION = '1.0'
    fields = {
        'request_id': fields.UUIDField(),
        'node_uuid': fields.StringField(),
        'event': fields.StringField(),
    }


def to_primitive(obj):
    return obj.obj_to_primitive()


def from_primitive(primitive):
    return InspectorObject.obj_from_primitive(primitive)
