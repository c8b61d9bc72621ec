"""Importing an ironic-inspector 12.5 database into inspector-ha's.

What is carried (``inspector-ha-dbsync import-ironic-inspector``):

* every node with its state, ``started_at``, ``finished_at``, ``error``
  and ``manage_boot`` (NULL, which upstream reads as true, becomes true);
* a ``waiting`` node stays ``waiting`` in its first attempt, with its
  lookup attributes and a closed ``start`` request in the ledger, exactly
  as a node inspector-ha set waiting itself: a ramdisk that posts later
  is found and processed, and the timeout counts from the original
  ``started_at``;
* a node in a state 12.5 drove from an in-process thread (starting,
  processing, reapplying, aborting, enrolling) has nothing left to drive
  it: it ends in ``error`` saying the migration interrupted it;
* finished and errored nodes get no lookup attributes (upstream keeps
  stale ones);
* stored introspection data, processed and unprocessed;
* rules with their conditions and actions in order, NULLs as defaults.

A node or rule whose UUID the target already has is left as it is, so
that running the import again changes nothing, and nodes the target had
before are never touched. Nodes are written in batches, each node with
its attributes, data and ledger rows in one transaction.
"""

from __future__ import annotations

import collections
import datetime
import json
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from inspector_ha.common import timeutils
from inspector_ha.db import data_store as data_store_mod
from inspector_ha.db import lookup
from inspector_ha.db import models
from inspector_ha.db import nodes as nodes_db
from inspector_ha.db import ledger
from inspector_ha.db import rules as rules_db
from inspector_ha.db import statements as sql
from inspector_ha.db import upstream_source
from inspector_ha.fsm import states as st

if TYPE_CHECKING:
    from inspector_ha.db import api

ACTOR = 'import-ironic-inspector'
#: The event of the transition that records an imported node.
IMPORT = 'import'
INTERRUPTED = ('Introspection interrupted by the migration from '
               'ironic-inspector (it was %s); start it again')
SWIFT = ('The source stored introspection data in Swift ([processing] '
         'store_data = swift): run ironic-inspector 12.5\'s '
         '`ironic-inspector-migrate-data --from swift --to database` first, '
         'then import again')
KEPT_STATES = frozenset([st.FINISHED, st.ERROR, st.WAITING])
LOOKUP_NAMES = frozenset([lookup.MAC, lookup.BMC])
BATCH = 100


class SwiftSource(upstream_source.WrongSource):
    """The source's data is in Swift, not in its database."""


class TargetNotReady(Exception):
    """inspector-ha's schema is not there yet."""


def run(source_url: str, store: api.Store, dry_run: bool = False,
        source_store_data: str | None = None,
        data_expiry: float | None = None) -> Report:
    """Import (or with ``dry_run`` only count) ``source_url`` into ``store``.

    :param source_store_data: upstream's ``[processing] store_data`` if
        known; ``swift`` refuses the import.
    :param data_expiry: seconds after which inspector-ha's clean-up drops
        a finished node's data, to warn about; None if it never does.
    :returns: the :class:`Report`.
    :raises WrongSource: not a 12.5 database, or its data is in Swift.
    :raises TargetNotReady: the target has no inspector-ha schema.
    """
    if source_store_data == 'swift':
        raise SwiftSource(SWIFT)
    source = upstream_source.Source(source_url)
    try:
        source.check_revision()
        _check_target(store)
        report = Report(dry_run)
        rows = source.nodes()
        for start in range(0, len(rows), BATCH):
            report.add(store.transaction(
                _import_nodes, source, rows[start:start + BATCH], dry_run))
        report.add(store.transaction(_import_rules, source.rules(),
                                     dry_run))
        report.source_data = source.count_data()
    finally:
        source.close()
    report.warn_about(rows, data_expiry)
    return report


def _check_target(store: api.Store) -> None:
    tables = set(sa.inspect(store.engine).get_table_names())
    missing = {models.Node.__tablename__, rules_db.Rule.__tablename__,
               models.Request.__tablename__} - tables
    if missing:
        raise TargetNotReady(
            'The target database has no %s table: run `inspector-ha-dbsync '
            'upgrade` first' % ', '.join(sorted(missing)))


class Report:
    """Counts per table, and warnings, printed by :meth:`lines`."""

    def __init__(self, dry_run: bool) -> None:
        self.dry_run = dry_run
        self.counts: collections.Counter[str] = collections.Counter()
        self.source_data: int | None = 0
        self.warnings: list[str] = []

    def add(self, counts: Mapping[str, int]) -> None:
        self.counts.update(counts)

    def warn_about(self, rows: Sequence[sa.Row[Any]],
                   data_expiry: float | None) -> None:
        finished = [r for r in rows if r.state == st.FINISHED]
        if finished and not self.source_data:
            self.warnings.append(
                'The source has %d finished nodes but no stored '
                'introspection data. If it used [processing] store_data = '
                'swift: %s' % (len(finished), SWIFT))
        if data_expiry is None:
            return
        cutoff = timeutils.utcnow() - datetime.timedelta(seconds=data_expiry)
        old = [r for r in rows if r.finished_at and r.finished_at < cutoff]
        if old:
            self.warnings.append(
                '%d nodes finished more than [periodic] data_expiry (%d s) '
                'ago: inspector-ha\'s data clean-up deletes their stored '
                'data on its next run (ironic-inspector kept it forever); '
                'set [periodic] data_cleanup_period = 0 or raise '
                'data_expiry to keep it' % (len(old), data_expiry))

    def lines(self) -> list[str]:
        c = self.counts
        verb = 'would import' if self.dry_run else 'imported'
        states = ', '.join('%s %d' % (s, c['state:' + s]) for s in
                           sorted(KEPT_STATES) if c['state:' + s])
        out = [
            'nodes: %s %d (%s); %d interrupted, ended in error; %d already '
            'present, left as they are' % (
                verb, c['nodes'], states or 'none', c['interrupted'],
                c['nodes present']),
            'attributes: %s %d (lookup attributes of waiting nodes)' % (
                verb, c['attributes']),
            'requests: %s %d (the start of each waiting node\'s attempt)' %
            (verb, c['requests']),
            'introspection_data: %s %d (processed %d, unprocessed %d)' % (
                verb, c['data'], c['data processed'],
                c['data'] - c['data processed']),
            'rules: %s %d; %d already present, left as they are' % (
                verb, c['rules'], c['rules present']),
            'rule_conditions: %s %d' % (verb, c['conditions']),
            'rule_actions: %s %d' % (verb, c['actions'])]
        out += ['WARNING: %s' % w for w in self.warnings]
        if self.dry_run:
            out.append('Dry run: nothing was written.')
        return out


def _import_nodes(conn: sa.Connection, source: upstream_source.Source,
                  rows: Sequence[sa.Row[Any]],
                  dry_run: bool) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    uuids = [r.uuid for r in rows]
    present = set(conn.scalars(sa.select(sql.NODES.c.uuid).where(
        sql.NODES.c.uuid.in_(uuids))))
    new = [r for r in rows if r.uuid not in present]
    counts['nodes present'] = len(present)
    if not new:
        return counts
    waiting = [r.uuid for r in new if r.state == st.WAITING]
    attributes = source.attributes(waiting) if waiting else []
    attributes = [a for a in attributes if a.name in LOOKUP_NAMES]
    data = source.data([r.uuid for r in new])
    now = timeutils.utcnow()
    for row in new:
        state, error, finished_at = _carried_state(row, now)
        counts['nodes'] += 1
        counts['state:' + state] += 1
        counts['interrupted'] += row.state not in KEPT_STATES
        if not dry_run:
            _add_node(conn, row, state, error, finished_at)
    counts['attributes'] = len(attributes)
    counts['requests'] = len(waiting)
    counts['data'] = len(data)
    counts['data processed'] = sum(1 for d in data if d[1])
    if not dry_run:
        _add_lookup(conn, attributes, waiting)
        _add_data(conn, data)
    return counts


def _carried_state(row: sa.Row[Any], now: datetime.datetime
                   ) -> tuple[str, str | None, datetime.datetime | None]:
    """``(state, error, finished_at)`` of an upstream node row."""
    if row.state in KEPT_STATES:
        return row.state, row.error, row.finished_at
    return st.ERROR, INTERRUPTED % row.state, now


def _add_node(conn: sa.Connection, row: sa.Row[Any], state: str,
              error: str | None,
              finished_at: datetime.datetime | None) -> None:
    conn.execute(sql.INSERT_NODE, dict(
        uuid=row.uuid, state=state, generation=1, attempt=1,
        started_at=row.started_at, finished_at=finished_at, error=error,
        manage_boot=row.manage_boot is not False))
    nodes_db.record(conn, row.uuid, IMPORT, None, state, 1, ACTOR,
                    None)


def _add_lookup(conn: sa.Connection, attributes: Iterable[sa.Row[Any]],
                waiting: Iterable[str]) -> None:
    for attr in attributes:
        value = attr.value.lower() if attr.name == lookup.MAC else attr.value
        nodes_db.add_attributes(conn, attr.node_uuid, attr.name, [value])
    for uuid in waiting:
        request_id = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL,
                                       '%s/%s' % (ACTOR, uuid)))
        ledger.add(conn, uuid, st.START, 1, request_id=request_id)
        ledger.mark(conn, request_id, ledger.DONE,
                      'imported from ironic-inspector in waiting')


def _add_data(conn: sa.Connection,
              data: Iterable[tuple[str, bool, Any]]) -> None:
    store = data_store_mod.DatabaseStore()
    for uuid, processed, value in data:
        store.save(conn, uuid, value, processed)


def _import_rules(conn: sa.Connection,
                  rules: Sequence[upstream_source.RuleRows],
                  dry_run: bool) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    present = set(conn.scalars(sa.select(rules_db.RULES.c.uuid)))
    for (rule, conditions, actions), created_at in zip(
            rules, _strictly_increasing([r[0].created_at for r in rules])):
        if rule.uuid in present:
            counts['rules present'] += 1
            continue
        counts['rules'] += 1
        counts['conditions'] += len(conditions)
        counts['actions'] += len(actions)
        if not dry_run:
            _add_rule(conn, rule, created_at, conditions, actions)
    return counts


def _strictly_increasing(times: Iterable[datetime.datetime | None]
                         ) -> list[datetime.datetime]:
    """``created_at`` values that keep the source's order of the rules in
    inspector-ha, which breaks ties by UUID: a tie (12.5 on MySQL keeps
    whole seconds) moves the later rule one microsecond on."""
    result: list[datetime.datetime] = []
    for value in times:
        value = value or timeutils.utcnow()
        if result and value <= result[-1]:
            value = result[-1] + datetime.timedelta(microseconds=1)
        result.append(value)
    return result


def _add_rule(conn: sa.Connection, rule: sa.Row[Any],
              created_at: datetime.datetime,
              conditions: Sequence[sa.Row[Any]],
              actions: Sequence[sa.Row[Any]]) -> None:
    conn.execute(sa.insert(rules_db.RULES).values(
        uuid=rule.uuid, created_at=created_at,
        description=rule.description, disabled=bool(rule.disabled),
        scope=rule.scope))
    rules_db.insert_children(
        conn,
        [dict(rule=rule.uuid, op=c.op, multiple=c.multiple or 'any',
              invert=bool(c.invert), field=c.field or '',
              params=_params(c.params)) for c in conditions],
        [dict(rule=rule.uuid, action=a.action, params=_params(a.params))
         for a in actions])


def _params(value: Any) -> str:
    return json.dumps(upstream_source.decode(value) or {})
