"""What the API writes to SQL before it publishes a request (outbox).

Each function runs inside one transaction and returns the request id to
publish; the request is durable before the client hears 202.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from inspector_ha.db import lookup
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.fsm import states as st

if TYPE_CHECKING:
    import sqlalchemy as sa

    from inspector_ha.db import models


#: The release from which every worker parks ramdisk data that came while
#: its node was starting (engine/worker.py); before it, the ramdisk is
#: asked to retry, as 0.1.0 did.
PARKING_RELEASE = '0.2.0'


class NotInCache(Exception):
    pass


class RetryLater(Exception):
    """A condition that clears by itself; the ramdisk should retry."""


class DataStore(Protocol):
    """Where introspection data is kept (a plugin of
    ``inspector_ha.introspection_data.store``)."""

    enabled: bool

    def save(self, conn: sa.Connection, uuid: str, data: Any,
             processed: bool) -> None: ...

    def get(self, conn: sa.Connection, uuid: str, processed: bool) -> Any: ...

    def delete(self, conn: sa.Connection, uuid: str) -> None: ...


def start(conn: sa.Connection, uuid: str, manage_boot: bool,
          bmc_addresses: Iterable[str], actor: str, data_store: DataStore,
          snapshot: dict[str, Any] | None = None) -> str:
    """A new attempt and its start request, which carries ``snapshot``
    (the Ironic node as the API read it) so that processing needs not
    read the node from Ironic again."""
    request_id = str(uuidlib.uuid4())
    node = nodes.get(conn, uuid)
    if node is None:
        attempt = nodes.create(conn, uuid, manage_boot, actor, request_id)
    else:
        attempt = nodes.restart(conn, node, manage_boot, actor,
                                request_id)
    nodes.add_attributes(conn, uuid, lookup.BMC, bmc_addresses)
    data_store.delete(conn, uuid)
    ledger.add(conn, uuid, st.START, attempt, request_id=request_id,
               payload={'node': snapshot} if snapshot else None,
               held_by=actor)
    return request_id


def find_and_record(conn: sa.Connection, macs: Iterable[str],
                    bmcs: Iterable[str], found: Callable[[str], None],
                    record: Callable[[sa.Connection, str], str | None]
                    ) -> tuple[str | None, str | None]:
    """The node under introspection ramdisk data with ``macs`` and
    ``bmcs`` is for, told to ``found(uuid)`` (even if recording fails),
    and what ``record(conn, uuid)`` records for it: ``(uuid, request
    id)``, or ``(None, None)`` when no node matches.

    :raises lookup.Ambiguous: several nodes match equally well.
    """
    try:
        uuid = lookup.find(conn, macs, bmcs)
    except lookup.NotFound:
        return None, None
    found(uuid)
    return uuid, record(conn, uuid)


def process(conn: sa.Connection, uuid: str, data: dict[str, Any],
            raw: dict[str, Any] | None, data_store: DataStore,
            early: bool = True, actor: str | None = None) -> str | None:
    """Accept ramdisk data; a retried post reuses the open request.

    Data that comes while the node is still ``starting`` (Ironic powered
    it on before the worker committed ``waiting``) is accepted the same
    way when ``early``: its request waits for the node to wait. Without
    ``early`` (members of a release that cannot park it are alive), the
    ramdisk is asked to retry.
    """
    node = _existing(conn, uuid)
    if node.state == st.STARTING and not early:
        raise RetryLater('Node %s is still being prepared for '
                         'introspection, retry later' % uuid)
    if node.state not in (st.STARTING, st.WAITING, st.ENROLLING):
        raise nodes.InvalidState(uuid, node.state, 'processing data')
    if ledger.newest_id(conn, uuid, st.PROCESS, node.attempt,
                        ledger.OPEN) is not None:
        return None
    data_store.save(conn, uuid, raw, False)
    return ledger.add(conn, uuid, st.PROCESS, node.attempt,
                      payload=data, held_by=actor).id


def event(conn: sa.Connection, uuid: str, name: str,
          payload: dict[str, Any] | None = None,
          actor: str | None = None) -> str:
    """Queue ``name`` (abort, error) for the current attempt of a node;
    ``actor``, the API process, holds it until a worker takes it."""
    node = _existing(conn, uuid)
    return ledger.add(conn, uuid, name, node.attempt,
                      payload=payload, held_by=actor).id


def node(conn: sa.Connection, uuid: str) -> models.Node:
    return _existing(conn, uuid)


def _existing(conn: sa.Connection, uuid: str) -> models.Node:
    row = nodes.get(conn, uuid)
    if row is None:
        raise NotInCache('Could not find node %s in cache' % uuid)
    return row


def reapply(conn: sa.Connection, uuid: str, data: dict[str, Any] | None,
            data_store: DataStore) -> str:
    """Queue processing ``data`` again, or the stored unprocessed data.

    Data supplied by the caller is stored first as the node's new
    unprocessed data, in this transaction.

    :raises NotInCache: no such node row.
    :raises InvalidState: the node's state has no ``reapply`` transition.
    :raises NotStored: no data supplied and none stored for the node.
    """
    node = _existing(conn, uuid)
    if st.target(node.state, st.REAPPLY) is None:
        raise nodes.InvalidState(uuid, node.state, 'reapplying data')
    if data is None:
        data = data_store.get(conn, uuid, False)
    else:
        data_store.save(conn, uuid, data, False)
    return ledger.add(conn, uuid, st.REAPPLY, node.attempt,
                        payload=data).id


def enroll(conn: sa.Connection, uuid: str, data: dict[str, Any],
           raw: dict[str, Any] | None, data_store: DataStore,
           macs: Iterable[str], bmc_addresses: Iterable[str], actor: str,
           error: str | None = None, discovered: bool = True) -> str:
    """Accept the data of a node discovery just enrolled in Ironic.

    In one transaction: the node row, created in ``enrolling``; its
    lookup attributes, so that a post the ramdisk retries finds this node
    instead of enrolling another; the unprocessed data; and the
    ``process`` request (``enrolling --process--> processing``), or,
    with ``error`` (pre-processing hooks failed), an ``error`` request
    carrying it. Not ``discovered``: an active node's data
    (``permit_active_introspection``); its boot is not managed, so it is
    not powered off; a node that has a row already is refused.
    """
    request_id = str(uuidlib.uuid4())
    if not discovered and nodes.get(conn, uuid) is not None:
        raise nodes.InvalidState(uuid, 'active', 'processing data of an '
                                 'active node introspected before; start '
                                 'its introspection (manage_boot=false) '
                                 'first')
    attempt = nodes.create_enrolling(conn, uuid, actor, request_id,
                                     manage_boot=discovered)
    nodes.add_attributes(conn, uuid, lookup.MAC, macs)
    nodes.add_attributes(conn, uuid, lookup.BMC, bmc_addresses)
    data_store.save(conn, uuid, raw, False)
    if error:
        return ledger.add(conn, uuid, st.FAIL, attempt,
                          payload={'error': error},
                          request_id=request_id, held_by=actor).id
    return ledger.add(conn, uuid, st.PROCESS, attempt, payload=data,
                      request_id=request_id, held_by=actor).id
