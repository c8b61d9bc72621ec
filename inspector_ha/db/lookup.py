"""Finding the node a ramdisk belongs to, among nodes under introspection.

Each lookup attribute (MAC, BMC address) that matches scores one for its
node; the highest score wins, a tie is ambiguous (upstream's rule).
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from inspector_ha.db import models
from inspector_ha.db import results

MAC = 'mac'
BMC = 'bmc_address'


class NotFound(Exception):
    pass


class Ambiguous(Exception):
    pass


def find(conn: sa.Connection, macs: Iterable[str] = (),
         bmc_addresses: Iterable[str] = ()) -> str:
    """Return the UUID of the best-matching node.

    :raises NotFound: nothing matches.
    :raises Ambiguous: several nodes match equally well.
    """
    values = {'b_macs': [m.lower() for m in macs],
              'b_bmcs': list(bmc_addresses)}
    query = _QUERIES[bool(values['b_macs']), bool(values['b_bmcs'])]
    if query is None:
        raise NotFound('no lookup attributes')
    rows = results.rows(conn, query, values)
    if not rows:
        raise NotFound('no node under introspection matches')
    if len(rows) > 1 and rows[0][1] == rows[1][1]:
        raise Ambiguous('Multiple nodes match the same number of '
                        'attributes: %s' % ', '.join(r[0] for r in rows))
    return str(rows[0][0])


def _query(macs: bool, bmcs: bool) -> sa.Select[str, int] | None:
    """The scoring query over MACs and/or BMC addresses, built once."""
    table = models.Attribute
    clauses: list[sa.ColumnElement[bool]] = []
    if macs:
        clauses.append(sa.and_(table.name == MAC, table.value.in_(
            sa.bindparam('b_macs', expanding=True))))
    if bmcs:
        clauses.append(sa.and_(table.name == BMC, table.value.in_(
            sa.bindparam('b_bmcs', expanding=True))))
    if not clauses:
        return None
    return (sa.select(table.node_uuid, sa.func.count().label('score'))
            .where(sa.or_(*clauses)).group_by(table.node_uuid)
            .order_by(sa.desc('score')).limit(2))


#: The query for each (MACs given, BMC addresses given).
_QUERIES = {(macs, bmcs): _query(macs, bmcs)
            for macs in (False, True) for bmcs in (False, True)}
