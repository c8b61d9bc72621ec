"""Leaderships and their fencing epochs.

Winning an election bumps the leadership's epoch in SQL. Every write a
leader makes runs in a transaction that first checks the epoch is still
its own (:func:`fence`), so a paused or partitioned ex-leader's writes are
refused once someone else has been elected, whatever the coordination
backend believed.
"""

import datetime
from typing import cast

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from inspector_ha.common import timeutils
from inspector_ha.db import models


class Fenced(Exception):
    """This member's epoch is no longer the leadership's epoch."""


class Leader(models.Base):
    __tablename__ = 'leaders'
    name: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    epoch: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    holder: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    elected_at: Mapped[datetime.datetime] = mapped_column(
        models.Timestamp, nullable=False)


class PeriodicRun(models.Base):
    __tablename__ = 'periodic_runs'
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True,
                                    autoincrement=True)
    task: Mapped[str] = mapped_column(sa.String(64), nullable=False)
    member: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    epoch: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    at: Mapped[datetime.datetime] = mapped_column(models.Timestamp,
                                                  nullable=False)


_LEADERS = cast(sa.Table, Leader.__table__)
_RUNS = cast(sa.Table, PeriodicRun.__table__)


def elect(conn: sa.Connection, name: str, holder: str) -> int:
    """Record ``holder`` as the leader of ``name``; return its new epoch."""
    epoch = _epoch_for_update(conn, name)
    values = {'holder': holder, 'elected_at': timeutils.utcnow()}
    if epoch is None:
        epoch = 1
        conn.execute(sa.insert(_LEADERS).values(name=name, epoch=epoch,
                                                **values))
    else:
        epoch += 1
        conn.execute(sa.update(_LEADERS).where(_LEADERS.c.name == name)
                     .values(epoch=epoch, **values))
    return epoch


def _epoch_for_update(conn: sa.Connection, name: str) -> int | None:
    """The leadership's epoch (None: never elected), its row locked for
    the rest of the transaction."""
    return conn.scalar(sa.select(_LEADERS.c.epoch)
                       .where(_LEADERS.c.name == name).with_for_update())


def fence(conn: sa.Connection, name: str, epoch: int | None) -> None:
    """Raise :class:`Fenced` unless ``epoch`` is still the current one
    (None, not elected, never is).

    The row is locked for the rest of the transaction, so no election can
    slip between the check and the leader's write.
    """
    current = _epoch_for_update(conn, name)
    if current is None or current != epoch:
        raise Fenced('%s: epoch %s is stale (current %s)' % (
            name, epoch, current))


def record_run(conn: sa.Connection, task: str, member: str,
               epoch: int | None) -> None:
    fence(conn, task, epoch)
    conn.execute(sa.insert(_RUNS).values(task=task, member=member,
                                         epoch=epoch, at=timeutils.utcnow()))


def all_leaders(conn: sa.Connection) -> list[Leader]:
    rows = conn.execute(sa.select(_LEADERS).order_by(_LEADERS.c.name))
    return [Leader(**row._mapping) for row in rows]


def runs(conn: sa.Connection, task: str | None = None) -> list[PeriodicRun]:
    query = sa.select(_RUNS).order_by(_RUNS.c.id)
    if task:
        query = query.where(_RUNS.c.task == task)
    return [PeriodicRun(**row._mapping) for row in conn.execute(query)]
