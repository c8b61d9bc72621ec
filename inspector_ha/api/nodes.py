"""What the v1 views share: the store's transactions, publishing a
request to the workers, and the Ironic node an identifier names."""

import logging

from openstack import exceptions as sdk_exc
from oslo_utils import uuidutils

from inspector_ha.api import errors
from inspector_ha.ironic import client as ironic_client

LOG = logging.getLogger(__name__)


class Nodes:
    """:param store: the SQL store (``transaction``).
    :param publisher: puts a recorded request on the queue.
    :param ironic: the Ironic client.
    """

    def __init__(self, store, publisher, ironic):
        self._store = store
        self._publisher = publisher
        self.ironic = ironic

    def tx(self, func, *args):
        """Run ``func`` in a store transaction; what it raises maps to
        HTTP codes through :data:`inspector_ha.api.errors.CODES`."""
        return self._store.transaction(func, *args)

    def publish(self, request_id, uuid, event):
        """Queue the request ``tx`` recorded (None: nothing to queue)."""
        if request_id is not None:
            LOG.info('Queued %s of node %s as request %s', event, uuid,
                     request_id)
            self._publisher.publish(request_id, uuid, event)

    def ironic_node(self, node_id):
        """Ironic's node by UUID or name; 404 or 400 as upstream."""
        try:
            return self.ironic.get_node(node_id)
        except ironic_client.NotFound:
            raise errors.ApiError('Node %s was not found in Ironic' %
                                  node_id, 404) from None
        except sdk_exc.BadRequestException as exc:
            # NOTE: Ironic refuses an identifier that is neither a UUID nor
            # a valid name with 400; upstream's text for it.
            raise errors.ApiError('Cannot get node %s: %s' %
                                  (node_id, exc)) from None

    def uuid(self, node_id):
        """The UUID ``node_id`` names (asking Ironic only for a name)."""
        if uuidutils.is_uuid_like(node_id):
            return node_id
        return self.ironic_node(node_id).id
