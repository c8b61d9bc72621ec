"""Where a node's time goes inside inspector-ha, read from its own SQL
ledger after a batch: for each request, the wait in the queue (created
until its transition is applied) and the task (applied until its
follow-up is committed); the ramdisk's delay (node ``waiting`` until its
data arrives); deliveries per request."""

import collections
import datetime


import measure
import testpath  # noqa: F401  (tests/functional on sys.path)
import batch

FOLLOW_UPS = {'start': ('wait', 'fail'), 'process': ('finish', 'fail')}


def _when(value):
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    return value


def _rows(database, uuids):
    requests = batch.query(database, 'SELECT id, node_uuid, event, status, '
                                     'deliveries, created_at FROM requests')
    transitions = batch.query(database, 'SELECT node_uuid, request_id, '
                                        'event, to_state, at FROM '
                                        'transitions ORDER BY id')
    return ([r for r in requests if r.node_uuid in uuids],
            [t for t in transitions if t.node_uuid in uuids])


def _stages(requests, transitions):
    by_request = collections.defaultdict(list)
    for row in transitions:
        by_request[row.request_id].append(row)
    waiting_at = {t.node_uuid: _when(t.at) for t in transitions
                  if t.to_state == 'waiting'}
    stages = collections.defaultdict(list)
    for req in requests:
        rows = by_request.get(req.id, [])
        applied = [_when(t.at) for t in rows if t.event == req.event]
        ended = [_when(t.at) for t in rows
                 if t.event in FOLLOW_UPS.get(req.event, ())]
        # NOTE: a start is applied twice: by the API (the node row is
        # 'starting' before the 202) and again by the worker; the last
        # application is the worker's.
        if applied:
            stages[req.event + ': queue wait'].append(
                (applied[-1] - _when(req.created_at)).total_seconds())
        if applied and ended:
            stages[req.event + ': task'].append(
                (ended[-1] - applied[-1]).total_seconds())
        if req.event == 'process' and req.node_uuid in waiting_at:
            stages['ramdisk delay (waiting until data posted)'].append(
                (_when(req.created_at) - waiting_at[req.node_uuid])
                .total_seconds())
    return {name: measure.summary_ms(values)
            for name, values in sorted(stages.items())}


def _strict_once(database, uuids):
    try:
        batch.assert_each_strict_transition_applied_once(database, uuids)
    except AssertionError as exc:
        return 'VIOLATED: %s' % exc
    return 'ok'


def analyse(database, uuids):
    """Stage latencies, delivery counts and the strict-once check."""
    uuids = set(uuids)
    requests, transitions = _rows(database, uuids)
    deliveries = collections.Counter(
        '%s x%d' % (r.event, r.deliveries) for r in requests)
    statuses = collections.Counter('%s %s' % (r.event, r.status)
                                   for r in requests)
    return {'stages': _stages(requests, transitions),
            'requests': len(requests),
            'deliveries': dict(sorted(deliveries.items())),
            'request_status': dict(sorted(statuses.items())),
            'transitions': len(transitions),
            'strict_transition_once': _strict_once(database, uuids)}
