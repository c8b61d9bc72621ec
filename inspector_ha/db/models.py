"""SQL tables. The database is the only source of truth.

``nodes.generation`` grows with every committed transition; every write
to a node is conditional on the (state, generation) it was read with.
``requests`` is both the request ledger (a request seen twice is
recognised) and the outbox (a request whose message was lost is re-driven).
``transitions`` is the history of committed transitions.
"""

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from sqlalchemy import (Boolean, DateTime, ForeignKey, Index, Integer,
                        String, Text)
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Mapped, instrumentation
from sqlalchemy.orm import configure_mappers, mapped_column

# Microsecond timestamps on MySQL/MariaDB too.
Timestamp = DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql')
LongText = Text().with_variant(mysql.LONGTEXT(), 'mysql')


class Base(DeclarativeBase):
    pass


class Node(Base):
    __tablename__ = 'nodes'
    uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    generation: Mapped[int] = mapped_column(Integer, nullable=False)
    attempt: Mapped[int] = mapped_column(Integer, nullable=False)
    started_at: Mapped[datetime.datetime | None] = mapped_column(
        Timestamp, nullable=True)
    finished_at: Mapped[datetime.datetime | None] = mapped_column(
        Timestamp, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    manage_boot: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    __table_args__ = (Index('nodes_state_idx', 'state'),
                      Index('nodes_started_idx', 'started_at', 'uuid'))


class Attribute(Base):
    __tablename__ = 'attributes'
    id: Mapped[int] = mapped_column(Integer, primary_key=True,
                                    autoincrement=True)
    node_uuid: Mapped[str] = mapped_column(
        String(36), ForeignKey('nodes.uuid', ondelete='CASCADE'),
        nullable=False)
    name: Mapped[str] = mapped_column(String(64), nullable=False)
    value: Mapped[str] = mapped_column(String(255), nullable=False)
    __table_args__ = (Index('attributes_lookup_idx', 'name', 'value'),
                      Index('attributes_node_idx', 'node_uuid'))


class IntrospectionData(Base):
    __tablename__ = 'introspection_data'
    node_uuid: Mapped[str] = mapped_column(
        String(36), ForeignKey('nodes.uuid', ondelete='CASCADE'),
        primary_key=True)
    processed: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    data: Mapped[str] = mapped_column(LongText, nullable=False)


class Request(Base):
    __tablename__ = 'requests'
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    node_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    event: Mapped[str] = mapped_column(String(16), nullable=False)
    attempt: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    payload: Mapped[str | None] = mapped_column(LongText, nullable=True)
    deliveries: Mapped[int] = mapped_column(Integer, nullable=False)
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: The member (``host.pid.<random>``) holding an open request: the API that
    #: accepted it, then the worker that counted its last delivery.
    held_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[datetime.datetime] = mapped_column(Timestamp,
                                                          nullable=False)
    updated_at: Mapped[datetime.datetime] = mapped_column(Timestamp,
                                                          nullable=False)
    __table_args__ = (Index('requests_status_idx', 'status', 'updated_at'),
                      Index('requests_node_idx', 'node_uuid'))


class Transition(Base):
    __tablename__ = 'transitions'
    id: Mapped[int] = mapped_column(Integer, primary_key=True,
                                    autoincrement=True)
    node_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    request_id: Mapped[str | None] = mapped_column(String(36),
                                                   nullable=True)
    event: Mapped[str] = mapped_column(String(16), nullable=False)
    from_state: Mapped[str | None] = mapped_column(String(16),
                                                   nullable=True)
    to_state: Mapped[str] = mapped_column(String(16), nullable=False)
    generation: Mapped[int] = mapped_column(Integer, nullable=False)
    actor: Mapped[str] = mapped_column(String(255), nullable=False)
    at: Mapped[datetime.datetime] = mapped_column(Timestamp, nullable=False)
    __table_args__ = (Index('transitions_node_idx', 'node_uuid', 'id'),)


_Model = TypeVar('_Model', bound=Base)
# NOTE: the constructor would configure the mappers on first use;
# detached() does not, and an attribute of an unconfigured one fails.
configure_mappers()


def detached(model: type[_Model], values: Mapping[Any, Any]) -> _Model:
    """A ``model`` object of ``values`` that no session tracks: a row read
    by a Core statement, or one about to be inserted by one. Built
    through the class's manager: the constructor's per-attribute events
    cost 10 us of CPU per object, this about 1 us."""
    row = instrumentation.manager_of_class(model).new_instance()
    row.__dict__.update(values)
    return row
