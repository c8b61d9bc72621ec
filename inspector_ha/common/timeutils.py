"""Naive-UTC timestamps, the format upstream's status object uses."""

import datetime


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def isoformat(value):
    return value.isoformat() if value is not None else None
