"""Naive-UTC timestamps, the format upstream's status object uses."""

from __future__ import annotations

import datetime


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def isoformat(value: datetime.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
