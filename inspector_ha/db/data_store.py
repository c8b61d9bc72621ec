"""Introspection data stores, chosen by ``[processing] store_data``."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from inspector_ha.db import dialects
from inspector_ha.db import results
from inspector_ha.db import statements as sql

#: The key of a row: one unprocessed and one processed per node.
KEYS = ('node_uuid', 'processed')


class NotStored(Exception):
    pass


class NoStore:
    """Keeps nothing (upstream's default)."""

    enabled = False

    def save(self, conn: sa.Connection, uuid: str, data: Any,
             processed: bool) -> None:
        pass

    def get(self, conn: sa.Connection, uuid: str, processed: bool) -> Any:
        raise NotStored('Inspector is not configured to store data. Set '
                        'the [processing] store_data configuration option '
                        'to change this.')

    def delete(self, conn: sa.Connection, uuid: str) -> None:
        pass


class DatabaseStore:
    """Keeps data in the ``introspection_data`` table."""

    enabled = True

    def save(self, conn: sa.Connection, uuid: str, data: Any,
             processed: bool) -> None:
        dialects.replace(conn, sql.DATA, {
            'node_uuid': uuid, 'processed': processed,
            'data': json.dumps(data)}, KEYS)

    def get(self, conn: sa.Connection, uuid: str, processed: bool) -> Any:
        data = results.scalar(conn, sql.DATA_OF, {'b_uuid': uuid,
                                                   'b_processed': processed})
        if data is None:
            raise NotStored('Introspection data not found for node %s, '
                            'processed=%s' % (uuid, processed))
        return json.loads(data)

    def delete(self, conn: sa.Connection, uuid: str) -> None:
        results.rowcount(conn, sql.DELETE_DATA, {'b_uuid': uuid})
