"""The statements of every introspection, built once.

Building a SQLAlchemy statement (coercing its clauses, computing its
cache key) costs about as much CPU as running it; these are built at
import with bound parameters (``b_*``) and run with a dict of values
(:mod:`inspector_ha.db.results`), so SQLAlchemy compiles each once per
database and finds it in its compiled cache after that. Written as Core
statements on the tables: the ORM's unit of work would cost more than
the statement.
"""

from __future__ import annotations

from typing import cast

import sqlalchemy as sa

from inspector_ha.db import models

NODES = cast(sa.Table, models.Node.__table__)
TRANSITIONS = cast(sa.Table, models.Transition.__table__)
ATTRIBUTES = cast(sa.Table, models.Attribute.__table__)
REQUESTS = cast(sa.Table, models.Request.__table__)
DATA = cast(sa.Table, models.IntrospectionData.__table__)

_node = NODES.c
_request = REQUESTS.c

#: Insert one row (or several: a list of dicts) of each table.
INSERT_NODE = sa.insert(NODES)
INSERT_TRANSITION = sa.insert(TRANSITIONS)
INSERT_ATTRIBUTES = sa.insert(ATTRIBUTES)
INSERT_REQUEST = sa.insert(REQUESTS)

#: A node's row, and a request's, by key.
NODE = sa.select(NODES).where(_node.uuid == sa.bindparam('b_uuid'))
REQUEST = sa.select(REQUESTS).where(_request.id == sa.bindparam('b_id'))
#: The values of a node's attributes of one name.
ATTRIBUTE_VALUES = sa.select(ATTRIBUTES.c.value).where(
    ATTRIBUTES.c.node_uuid == sa.bindparam('b_uuid'),
    ATTRIBUTES.c.name == sa.bindparam('b_name'))

_THIS_WRITE = (_node.uuid == sa.bindparam('b_uuid'),
               _node.state == sa.bindparam('b_state'),
               _node.generation == sa.bindparam('b_generation'))
#: A transition, conditional on the (state, generation) it was read with.
MOVE_NODE = sa.update(NODES).where(*_THIS_WRITE)
#: Where a node is and at which generation, its row locked.
NODE_FOR_UPDATE = (sa.select(_node.state, _node.generation)
                   .where(_node.uuid == sa.bindparam('b_uuid'))
                   .with_for_update())
#: When the node entered its state: its last transition into it from
#: another one (self-loops keep it there).
ENTERED_AT = (
    sa.select(TRANSITIONS.c.at)
    .where(TRANSITIONS.c.node_uuid == sa.bindparam('b_uuid'),
           TRANSITIONS.c.to_state == sa.bindparam('b_state'),
           sa.or_(TRANSITIONS.c.from_state.is_(None),
                  TRANSITIONS.c.from_state != sa.bindparam('b_state')))
    .order_by(TRANSITIONS.c.id.desc()).limit(1))
DELETE_ATTRIBUTES = sa.delete(ATTRIBUTES).where(
    ATTRIBUTES.c.node_uuid == sa.bindparam('b_uuid'))
#: Delete a node's attributes of one name.
DELETE_NAMED_ATTRIBUTES = DELETE_ATTRIBUTES.where(
    ATTRIBUTES.c.name == sa.bindparam('b_name'))
DELETE_DATA = sa.delete(DATA).where(DATA.c.node_uuid == sa.bindparam('b_uuid'))
#: A node's stored data, processed or not.
DATA_OF = sa.select(DATA.c.data).where(
    DATA.c.node_uuid == sa.bindparam('b_uuid'),
    DATA.c.processed == sa.bindparam('b_processed'))

_STATUS_IN = _request.status.in_(sa.bindparam('b_statuses',
                                                expanding=True))
#: Update a request by id: the columns set are those of the values
#: given beside ``b_id``.
UPDATE_REQUEST = sa.update(REQUESTS).where(
    _request.id == sa.bindparam('b_id'))
#: Update a request by id while its status is one of ``b_statuses``.
UPDATE_REQUEST_IN = UPDATE_REQUEST.where(_STATUS_IN)
#: Update the requests of an attempt of one of ``b_statuses`` but those
#: of the event ``b_kept_event`` and request ``b_id`` (``''``: none).
UPDATE_ATTEMPT = sa.update(REQUESTS).where(
    _request.node_uuid == sa.bindparam('b_uuid'),
    _request.attempt == sa.bindparam('b_attempt'),
    _request.event != sa.bindparam('b_kept_event'), _STATUS_IN,
    _request.id != sa.bindparam('b_id'))
#: Count one more delivery of request ``b_id``; where the database has
#: ``UPDATE ... RETURNING``, in the same round trip as reading the count.
COUNT_DELIVERY = UPDATE_REQUEST.values(deliveries=_request.deliveries + 1,
                                       held_by=sa.bindparam('b_holder'))
COUNT_DELIVERY_RETURNING = COUNT_DELIVERY.returning(_request.deliveries)
DELIVERIES = sa.select(_request.deliveries).where(
    _request.id == sa.bindparam('b_id'))
#: A claim's stamp (its ``deliveries``) and when it was stamped.
CLAIM_STAMPED = sa.select(_request.deliveries, _request.updated_at).where(
    _request.id == sa.bindparam('b_id'))
_OF_ATTEMPT = (_request.node_uuid == sa.bindparam('b_uuid'),
               _request.event == sa.bindparam('b_event'),
               _request.attempt == sa.bindparam('b_attempt'))
#: The newest request of an event of a node's attempt.
NEWEST_REQUEST = (sa.select(REQUESTS).where(*_OF_ATTEMPT)
                  .order_by(_request.created_at.desc()).limit(1))
#: The ids and statuses of such requests, newest first. (Not filtered by
#: status in SQL: given one status, SQLite would search the status index,
#: every open request of every node, rather than the node's few rows.)
REQUEST_STATUSES = (sa.select(_request.id, _request.status)
                    .where(*_OF_ATTEMPT)
                    .order_by(_request.created_at.desc()))
