"""Where the lists come from: Ironic's ports and the SQL store."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from inspector_ha.db import lookup
from inspector_ha.db import models
from inspector_ha.firewall import infiniband
from inspector_ha.ironic import client as ironic_client


def ironic_ports(ironic: ironic_client.Ironic,
                 ethoib_interfaces: Iterable[str],
                 after: str | None = None) -> list[tuple[str, str]]:
    """``[(port_id, mac)]`` of Ironic's ports in creation order (all, or
    those created after the port ``after``), the MACs of InfiniBand ports
    mapped through ``ethoib_interfaces``."""
    ports = ironic.all_ports(after=after)
    macs = infiniband.macs_for_ports(ports, ethoib_interfaces)
    return [(port['id'], mac) for port, mac in zip(ports, macs)]


def under_introspection(conn: sa.Connection) -> dict[str, set[str]]:
    """``{node_uuid: {mac, ...}}``: the MAC lookup attributes, which exist
    exactly while a node's introspection is not over (guarantee S4)."""
    rows = conn.execute(sa.select(
        models.Attribute.node_uuid, models.Attribute.value).where(
        models.Attribute.name == lookup.MAC)).all()
    result: dict[str, set[str]] = {}
    for node_uuid, mac in rows:
        result.setdefault(node_uuid, set()).add(mac.lower())
    return result
