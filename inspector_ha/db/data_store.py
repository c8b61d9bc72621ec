"""Introspection data stores, chosen by ``[processing] store_data``."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import orm

from inspector_ha.db import dialects
from inspector_ha.db import models
from inspector_ha.db import statements as sql

#: The key of a row: one unprocessed and one processed per node.
KEYS = ('node_uuid', 'processed')


class NotStored(Exception):
    pass


class NoStore:
    """Keeps nothing (upstream's default)."""

    enabled = False

    def save(self, session: orm.Session, uuid: str, data: Any,
             processed: bool) -> None:
        pass

    def get(self, session: orm.Session, uuid: str, processed: bool) -> Any:
        raise NotStored('Inspector is not configured to store data. Set '
                        'the [processing] store_data configuration option '
                        'to change this.')

    def delete(self, session: orm.Session, uuid: str) -> None:
        pass


class DatabaseStore:
    """Keeps data in the ``introspection_data`` table."""

    enabled = True

    def save(self, session: orm.Session, uuid: str, data: Any,
             processed: bool) -> None:
        dialects.replace(session, sql.DATA, {
            'node_uuid': uuid, 'processed': processed,
            'data': json.dumps(data)}, KEYS)

    def get(self, session: orm.Session, uuid: str, processed: bool) -> Any:
        row = session.get(models.IntrospectionData, (uuid, processed))
        if row is None:
            raise NotStored('Introspection data not found for node %s, '
                            'processed=%s' % (uuid, processed))
        return json.loads(row.data)

    def delete(self, session: orm.Session, uuid: str) -> None:
        session.execute(sql.DELETE_DATA, {'b_uuid': uuid})
