"""What the v1 views share: the store's transactions, publishing a
request to the workers, and the Ironic node an identifier names."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from openstack import exceptions as sdk_exc
from oslo_utils import uuidutils

from inspector_ha.api import errors
from inspector_ha.ironic import client as ironic_client

if TYPE_CHECKING:
    from inspector_ha.db import api as db_api
    from inspector_ha.ironic import node as node_mod
    from inspector_ha.messaging import queue

_T = TypeVar('_T')

LOG = logging.getLogger(__name__)


class Nodes:
    """:param store: the SQL store (``transaction``).
    :param publisher: puts a recorded request on the queue.
    :param ironic: the Ironic client.
    """

    def __init__(self, store: db_api.Store, publisher: queue.Publishing,
                 ironic: ironic_client.Ironic) -> None:
        self._store = store
        self._publisher = publisher
        self.ironic = ironic

    def tx(self, func: Callable[..., _T], *args: Any) -> _T:
        """Run ``func`` in a store transaction; what it raises maps to
        HTTP codes through :data:`inspector_ha.api.errors.CODES`."""
        return self._store.transaction(func, *args)

    def publish(self, request_id: str | None, uuid: str,
                event: str) -> None:
        """Queue the request ``tx`` recorded (None: nothing to queue)."""
        if request_id is not None:
            LOG.info('Queued %s of node %s as request %s', event, uuid,
                     request_id)
            self._publisher.publish(request_id, uuid, event)

    def ironic_node(self, node_id: str) -> node_mod.Node:
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

    def uuid(self, node_id: str) -> str:
        """The UUID ``node_id`` names (asking Ironic only for a name)."""
        if uuidutils.is_uuid_like(node_id):
            return node_id
        return self.ironic_node(node_id).id
