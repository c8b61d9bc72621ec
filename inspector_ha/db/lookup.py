"""Finding the node a ramdisk belongs to, among nodes under introspection.

Each lookup attribute (MAC, BMC address) that matches scores one for its
node; the highest score wins, a tie is ambiguous (upstream's rule).
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy import orm

from inspector_ha.db import models

MAC = 'mac'
BMC = 'bmc_address'


class NotFound(Exception):
    pass


class Ambiguous(Exception):
    pass


def find(session: orm.Session, macs: Iterable[str] = (),
         bmc_addresses: Iterable[str] = ()) -> str:
    """Return the UUID of the best-matching node.

    :raises NotFound: nothing matches.
    :raises Ambiguous: several nodes match equally well.
    """
    wanted = _conditions(macs, bmc_addresses)
    if wanted is None:
        raise NotFound('no lookup attributes')
    table = models.Attribute
    query = (sa.select(table.node_uuid, sa.func.count().label('score'))
             .where(wanted).group_by(table.node_uuid)
             .order_by(sa.desc('score')).limit(2))
    rows = session.execute(query).all()
    if not rows:
        raise NotFound('no node under introspection matches')
    if len(rows) > 1 and rows[0].score == rows[1].score:
        raise Ambiguous('Multiple nodes match the same number of '
                        'attributes: %s' % ', '.join(r[0] for r in rows))
    return rows[0].node_uuid


def _conditions(macs: Iterable[str], bmc_addresses: Iterable[str]
                ) -> sa.ColumnElement[bool] | None:
    table = models.Attribute
    clauses: list[sa.ColumnElement[bool]] = []
    if macs:
        clauses.append(sa.and_(table.name == MAC,
                               table.value.in_([m.lower() for m in macs])))
    if bmc_addresses:
        clauses.append(sa.and_(table.name == BMC,
                               table.value.in_(list(bmc_addresses))))
    return sa.or_(*clauses) if clauses else None
