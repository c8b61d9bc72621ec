"""What a transition prepares before it commits, recorded in its
transaction (:meth:`inspector_ha.engine.tasks.Tasks.prepare`): a
start's Ironic ports, processing's result; and what processing reads of
the attempt as it started (:func:`as_started`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import sqlalchemy as sa

from inspector_ha.db import ledger
from inspector_ha.db import lookup
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db import results
from inspector_ha.db import rules as rules_db
from inspector_ha.db import statements as sql
from inspector_ha.fsm import states as st
from inspector_ha.ironic import client as ironic_client
from inspector_ha.ironic import node as ironic_node_mod
from inspector_ha.processing import changes as changes_mod

#: The ledger row recording an attempt's processing result.
PROCESSED = 'processed'
#: The ledger row recording the node's Ironic ports as the attempt
#: started (processing plans its port changes from them: no second
#: listing).
PORTS = 'ports'


class DataStore(Protocol):
    """Where introspection data is kept (a plugin; ``save`` is used)."""

    def save(self, conn: sa.Connection, uuid: str, data: Any,
             processed: bool) -> None: ...


class Prepared(Protocol):
    """What :meth:`inspector_ha.engine.tasks.Tasks.prepare` gives:
    recorded in the transaction of the transition it was prepared for."""

    def record(self, conn: sa.Connection, node: models.Node) -> None: ...


class Listed:
    """A start's preparation: the node's Ironic ports (or the ``error``
    listing them met), recorded with the start's transition: the MACs
    for lookup and the ports for processing (:func:`record_ports`)."""

    def __init__(self, ports: list[ironic_client.Port] | None = None,
                 error: str | None = None) -> None:
        self.ports = ports or []
        self.error = error

    @property
    def macs(self) -> list[str]:
        return [port.address for port in self.ports]

    def record(self, conn: sa.Connection, node: models.Node) -> None:
        if self.error is None:
            record_ports(conn, node, self.macs, self.ports)


class Processed:
    """The result of processing, recorded with ``waiting -> processing``:
    the changes to send (``PROCESSED`` ledger row of the attempt) and,
    when processing succeeded, the processed data."""

    def __init__(self, changes: changes_mod.Changes,
                 data: dict[str, Any] | None = None,
                 data_store: DataStore | None = None) -> None:
        self.changes = changes
        self._data = data
        self._data_store = data_store

    def record(self, conn: sa.Connection, node: models.Node) -> None:
        ledger.record_once(conn, node.uuid, PROCESSED, node.attempt,
                           self.changes.to_dict())
        if self._data_store is not None:
            self._data_store.save(conn, node.uuid, self._data, True)


class Started(NamedTuple):
    """What processing reads of an attempt in one transaction: the
    Ironic node snapshot, MACs and ports recorded when it started (by
    the API and with the start's transition; each None when not
    recorded, the ports by a worker of 0.1.0), and every rule."""

    snapshot: Any = None
    macs: list[str] | None = None
    ports: list[ironic_client.Port] | None = None
    rules: Sequence[dict[str, Any]] = ()


def as_started(conn: sa.Connection, node: models.Node) -> Started:
    """The attempt of ``node`` as it started, and the rules."""
    every_rule = rules_db.list_all(conn)
    start = ledger.newest(conn, node.uuid, st.START, node.attempt)
    snapshot = ledger.payload(start).get('node') if start else None
    if snapshot is None:
        return Started(rules=every_rule)
    macs = [mac for (mac,) in results.rows(
        conn, sql.ATTRIBUTE_VALUES,
        {'b_uuid': node.uuid, 'b_name': lookup.MAC})]
    ports = ledger.recorded(conn, node.uuid, PORTS, node.attempt)
    return Started(
        ironic_node_mod.Node.from_snapshot(snapshot), macs,
        None if ports is None else [ironic_client.Port(*port)
                                    for port in ports['ports']],
        every_rule)


def record_ports(conn: sa.Connection, node: models.Node,
                 macs: list[str], ports: list[ironic_client.Port]) -> None:
    """The node's MACs for lookup, and its ports for processing (a start
    delivered again keeps the first record: a port changed since is met
    by processing as gone or as existing)."""
    nodes.replace_attributes(conn, node.uuid, lookup.MAC, macs)
    ledger.add_once(conn, node.uuid, PORTS, node.attempt,
                    payload={'ports': [list(port) for port in ports]},
                    status=ledger.DONE)
