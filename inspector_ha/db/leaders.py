"""Leaderships and their fencing epochs.

Winning an election bumps the leadership's epoch in SQL. Every write a
leader makes runs in a transaction that first checks the epoch is still
its own (:func:`fence`), so a paused or partitioned ex-leader's writes are
refused once someone else has been elected, whatever the coordination
backend believed.
"""

import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, Session, mapped_column

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


def elect(session: Session, name: str, holder: str) -> int:
    """Record ``holder`` as the leader of ``name``; return its new epoch."""
    row = session.get(Leader, name, with_for_update=True)
    if row is None:
        row = Leader(name=name, epoch=0, holder=holder)
        session.add(row)
    row.epoch += 1
    row.holder = holder
    row.elected_at = timeutils.utcnow()
    session.flush()
    return row.epoch


def fence(session: Session, name: str, epoch: int | None) -> None:
    """Raise :class:`Fenced` unless ``epoch`` is still the current one
    (None, not elected, never is).

    The row is locked for the rest of the transaction, so no election can
    slip between the check and the leader's write.
    """
    row = session.get(Leader, name, with_for_update=True,
                      populate_existing=True)
    if row is None or row.epoch != epoch:
        raise Fenced('%s: epoch %s is stale (current %s)' % (
            name, epoch, row.epoch if row else None))


def record_run(session: Session, task: str, member: str,
               epoch: int | None) -> None:
    fence(session, task, epoch)
    session.add(PeriodicRun(task=task, member=member, epoch=epoch,
                            at=timeutils.utcnow()))


def all_leaders(session: Session) -> list[Leader]:
    return list(session.scalars(sa.select(Leader).order_by(Leader.name)))


def runs(session: Session, task: str | None = None) -> list[PeriodicRun]:
    query = sa.select(PeriodicRun).order_by(PeriodicRun.id)
    if task:
        query = query.where(PeriodicRun.task == task)
    return list(session.scalars(query))
