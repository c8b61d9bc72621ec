"""Where the lists come from: Ironic's ports and the SQL store."""

import sqlalchemy as sa

from inspector_ha.db import lookup
from inspector_ha.db import models
from inspector_ha.firewall import infiniband


def ironic_ports(service, after=None):
    """``[(port_id, mac)]`` of Ironic's ports in creation order (all, or
    those created after the port ``after``), EoIB-mapped."""
    ports = service.ironic.all_ports(after=after)
    macs = infiniband.macs_for_ports(
        ports, service.conf.iptables.ethoib_interfaces)
    return [(port['id'], mac) for port, mac in zip(ports, macs)]


def under_introspection(session):
    """``{node_uuid: {mac, ...}}``: the MAC lookup attributes, which exist
    exactly while a node's introspection is not over (guarantee S4)."""
    rows = session.execute(sa.select(
        models.Attribute.node_uuid, models.Attribute.value).where(
        models.Attribute.name == lookup.MAC)).all()
    result = {}
    for node_uuid, mac in rows:
        result.setdefault(node_uuid, set()).add(mac.lower())
    return result
