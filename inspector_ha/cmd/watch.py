"""``inspector-ha-status --watch``: a live view of a cluster at work.

Every ``--interval`` seconds: nodes per state, introspections finished in
the last minute, an estimate of the time left for the nodes in flight at
that rate, the errors grouped by message (UUIDs, MACs and addresses
masked), members and leaders. On a terminal the view is redrawn in place;
piped, each refresh is one plain line (``--json``: one JSON object).
"""

from __future__ import annotations

import collections
import datetime
import json
import re
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import sqlalchemy as sa

from inspector_ha.common import timeutils
from inspector_ha.db import models
from inspector_ha.fsm import states as st

WINDOW = 60
TOP_ERRORS = 8
HOME_AND_CLEAR = '\x1b[H\x1b[2J'
_MASKS = [
    (re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                r'[0-9a-f]{12}', re.I), '<uuid>'),
    (re.compile(r'\b([0-9a-f]{2}[:-]){5}[0-9a-f]{2}\b', re.I), '<mac>'),
    (re.compile(r'\b\d{1,3}(\.\d{1,3}){3}\b'), '<ip>'),
]


def progress(conn: sa.Connection,
             now: datetime.datetime | None = None) -> dict[str, Any]:
    """Nodes per state, finished in the window, errors grouped."""
    now = now or timeutils.utcnow()
    table = models.Node
    per_state = dict(conn.execute(
        sa.select(table.state, sa.func.count()).group_by(table.state)).all())
    recent = conn.execute(sa.select(sa.func.count()).where(
        table.finished_at >= now - datetime.timedelta(seconds=WINDOW))
    ).scalar_one()
    errors = collections.Counter(
        mask(e) for e in conn.scalars(
            sa.select(table.error).where(table.state == st.ERROR)
            .limit(100000)))
    in_flight = sum(n for s, n in per_state.items()
                    if s not in st.FINAL_STATES)
    per_minute = recent * 60.0 / WINDOW
    return {'nodes': per_state, 'in_flight': in_flight,
            'finished_per_minute': per_minute,
            'eta_seconds': (in_flight * 60.0 / per_minute
                            if per_minute and in_flight else None),
            'errors': dict(errors.most_common(TOP_ERRORS))}


def mask(message: str | None) -> str:
    message = ' '.join((message or '(no message)').split())
    for pattern, replacement in _MASKS:
        message = pattern.sub(replacement, message)
    return message[:200]


def duration(seconds: float | None) -> str:
    if seconds is None:
        return 'unknown'
    seconds = int(round(seconds))
    if seconds >= 3600:
        return '%dh%02dm' % (seconds // 3600, seconds % 3600 // 60)
    return '%dm%02ds' % (seconds // 60, seconds % 60)


def _states(nodes: Mapping[str, int]) -> str:
    order = [s for s in st.STATES if s in nodes] + sorted(
        set(nodes) - set(st.STATES))
    return '  '.join('%s %d' % (s, nodes[s]) for s in order) or 'none'


def screen(status: Mapping[str, Any], now: datetime.datetime,
           width: int = 100) -> str:
    """The full view, for a terminal ``width`` columns wide."""
    lines = ['inspector-ha  %s UTC' % now.strftime('%Y-%m-%d %H:%M:%S'),
             '',
             'Nodes      %s' % _states(status['nodes']),
             'In flight  %d   finished %.1f/min (last %d s)   ETA %s' % (
                 status['in_flight'], status['finished_per_minute'],
                 WINDOW, duration(status['eta_seconds'])),
             'Requests   %s' % (', '.join(
                 '%s %d' % kv for kv in sorted(
                     status['open_requests'].items())) or 'none open'),
             '']
    errors = status['errors']
    lines.append('Errors     %s' % ('none' if not errors else ''))
    lines += ['  %5d  %s' % (n, _fit(m, width - 9))
              for m, n in errors.items()]
    lines.append('')
    lines.append('Members    %d' % len(status['members']))
    lines += ['  %s' % m for m in sorted(status['members'])]
    lines.append('Leaders')
    lines += ['  %-13s %s (epoch %d)' % (n, leader['holder'],
                                         leader['epoch'])
              for n, leader in sorted(status['leaders'].items())]
    return '\n'.join(lines)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 3, 10)] + '...'


def line(status: Mapping[str, Any], now: datetime.datetime) -> str:
    """One plain line, for a pipe or a log."""
    return '%s %s | in flight %d | %.1f finished/min | ETA %s | ' \
        'errors %d | members %d | leaders %d' % (
            now.strftime('%H:%M:%S'), _states(status['nodes']),
            status['in_flight'], status['finished_per_minute'],
            duration(status['eta_seconds']), sum(status['errors'].values()),
            len(status['members']), len(status['leaders']))


def watch(collect: Callable[[], Mapping[str, Any]], interval: float,
          iterations: int = 0, as_json: bool = False,
          out: TextIO | None = None) -> bool:
    """Print ``collect()`` every ``interval`` s (``iterations`` times, or
    until interrupted); True once stopped by Ctrl-C."""
    out = out or sys.stdout
    tty = out.isatty() and not as_json
    count = 0
    try:
        while True:
            status, now = collect(), timeutils.utcnow()
            if as_json:
                out.write(json.dumps(dict(status, at=now.isoformat()),
                                     sort_keys=True) + '\n')
            elif tty:
                out.write(HOME_AND_CLEAR + screen(
                    status, now, shutil.get_terminal_size().columns) + '\n')
            else:
                out.write(line(status, now) + '\n')
            out.flush()
            count += 1
            if iterations and count >= iterations:
                return False
            time.sleep(interval)
    except KeyboardInterrupt:
        return True
