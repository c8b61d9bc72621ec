"""Recorder and checker of a batch's history, Jepsen style.

:func:`record` reads, after the batch, what was committed (the
``transitions`` table), the request ledger, the leaders and their runs,
what each worker attempted (its ``TRANSITION {json}`` log lines, one per
attempted transition with its outcome) and the power-ons Ironic performed
(its conductor's log). :func:`check` returns every violation found of:

* each node's committed states form a path of the machine
  (``inspector_ha/fsm/states.py``), generations growing by one per commit;
* no transition (other than a reentrant self-loop) committed twice for one
  request;
* a task's epochs only grow in its run log, one member per epoch;
* every request accepted with 202 ends in ``finished``, or in ``error``
  with a reason (:func:`conclude` then counts an error as a loss unless
  the test asked for it: a fault is never a reason); no request of the
  batch is left open (stuck) and every accepted start is in the ledger
  (none lost);
* no node powered on, nor off, twice within one introspection attempt
  (processing is never applied twice, D3b);
* every commit a worker logged is in the table (no commit lost), and
  every commit in the table made by a worker that was not killed was
  logged as attempted;
* every process exited 0 after SIGTERM, or was SIGKILLed by the test, or
  exited 1 after naming the backend it lost.
"""

import collections
import dataclasses
import json
import os
import re

from inspector_ha.fsm import states as st

import cluster as cluster_mod

POWER_ON = re.compile(r'Successfully set node (\S+) power state to power on')
POWER_OFF = re.compile(
    r'Successfully set node (\S+) power state to power off')
#: A worker's ``TRANSITION {json}`` line, whatever oslo.log puts between
#: the logger's name and the message (request ids, ``[node <uuid>]``).
ATTEMPT = re.compile(r' INFO inspector_ha\.engine\.worker[: ].*?'
                     r'TRANSITION (\{.*\})$')
OPEN = ('pending', 'applied')
CLEAN_FAILURE = ('Stopping the service:', 'Could not start:')


@dataclasses.dataclass
class History:
    nodes: dict
    committed: list
    ledger: list
    runs: list
    leaders: list
    attempts: list
    power_ons: collections.Counter
    power_offs: collections.Counter
    accepted: set
    statuses: dict
    exits: dict
    logs: dict
    killed: set
    killed_members: set

    def stats(self):
        outcomes = collections.Counter(a['outcome'] for a in self.attempts)
        return {
            'committed': len(self.committed),
            'attempts': dict(outcomes),
            'redeliveries': sum(max(0, r.deliveries - 1)
                                for r in self.ledger),
            'dead': sum(r.status == 'dead' for r in self.ledger),
            'power_ons': sum(self.power_ons.values()),
            'power_offs': sum(self.power_offs.values()),
            'fenced_leader_writes': sum(log.count('Stepping down')
                                        for log in self.logs.values()),
            'final': dict(collections.Counter(
                n.state for n in self.nodes.values())),
        }


def record(harness, driver, killed=()):
    """What the batch did, from SQL and the API (the cluster must still
    run); ``killed``: the processes the test SIGKILLed. The logs are read
    by :func:`read_logs` once the processes have exited."""
    uuids = set(harness.nodes)
    query = harness.query
    return History(
        nodes={r.uuid: r for r in query(
            'SELECT uuid, state, error, attempt FROM nodes')
            if r.uuid in uuids},
        committed=[r for r in query(
            'SELECT id, node_uuid, request_id, event, from_state, '
            'to_state, generation, actor, at FROM transitions ORDER BY id')
            if r.node_uuid in uuids],
        ledger=[r for r in query(
            'SELECT id, node_uuid, event, attempt, status, detail, '
            'deliveries FROM requests') if r.node_uuid in uuids],
        runs=query('SELECT task, member, epoch, at FROM periodic_runs '
                   'ORDER BY id'),
        leaders=query('SELECT name, epoch, holder FROM leaders'),
        attempts=[], power_ons=collections.Counter(),
        power_offs=collections.Counter(),
        accepted=set(driver.accepted), statuses=driver.statuses(),
        exits={}, logs={}, killed={p.name for p in killed},
        killed_members={cluster_mod.member_prefix(p) for p in killed})


def read_logs(history, harness):
    """The processes' logs, their attempted transitions and Ironic's
    power-ons; call it after the processes have exited."""
    procs = harness.cluster.workers + harness.cluster.apis
    history.logs = {p.name: p.log.read_text(errors='replace')
                    for p in procs}
    history.attempts = [json.loads(m.group(1))
                        for p in harness.cluster.workers
                        for m in map(ATTEMPT.search,
                                     history.logs[p.name].splitlines())
                        if m]
    ironic_log = harness.ironic.log_path.read_text(errors='replace')
    history.power_ons = _count(POWER_ON, ironic_log, set(history.nodes))
    history.power_offs = _count(POWER_OFF, ironic_log, set(history.nodes))


def _count(pattern, log, uuids):
    counts = collections.Counter()
    for line in log.splitlines():
        match = pattern.search(line)
        if match and match.group(1) in uuids:
            counts[match.group(1)] += 1
    return counts


def check(history):
    """Every violation found, as text; empty when the history is valid."""
    return (_paths(history) + _once_per_request(history) +
            _epochs(history) + _accepted_end(history) +
            _nothing_stuck_or_lost(history) + _power_on_once(history) +
            _power_off_once(history) +
            _attempts_match_commits(history) + _exit_codes(history))


def _per_node(rows):
    grouped = collections.defaultdict(list)
    for row in rows:
        grouped[row.node_uuid].append(row)
    return grouped


def _paths(history):
    problems = []
    for uuid, rows in _per_node(history.committed).items():
        state, generation = None, 0
        for row in rows:
            if row.from_state != state or row.generation != generation + 1:
                problems.append('node %s: %s->%s gen %d after %s gen %d' % (
                    uuid, row.from_state, row.to_state, row.generation,
                    state, generation))
            elif state is not None and st.target(
                    state, row.event) != row.to_state:
                problems.append('node %s: %s --%s--> %s is no transition '
                                'of the machine' % (uuid, state, row.event,
                                                    row.to_state))
            state, generation = row.to_state, row.generation
    return problems


def _once_per_request(history):
    counts = collections.Counter(
        (r.request_id, r.from_state, r.to_state) for r in history.committed
        if r.from_state != r.to_state)
    return ['request %s committed %s->%s %d times' % (key + (n,))
            for key, n in counts.items() if n > 1]


def _epochs(history):
    problems, last = [], {}
    members = collections.defaultdict(set)
    for run in history.runs:
        if run.epoch < last.get(run.task, 0):
            problems.append('task %s: epoch %d ran after epoch %d' % (
                run.task, run.epoch, last[run.task]))
        last[run.task] = max(run.epoch, last.get(run.task, 0))
        members[(run.task, run.epoch)].add(run.member)
    problems += ['task %s epoch %d run by %s' % (t, e, sorted(m))
                 for (t, e), m in members.items() if len(m) > 1]
    problems += ['leader of %s at epoch %d below its runs\' %d' % (
        lead.name, lead.epoch, last[lead.name]) for lead in history.leaders
        if lead.epoch < last.get(lead.name, 0)]
    return problems


def _accepted_end(history):
    problems = []
    for uuid in history.accepted:
        status = history.statuses.get(uuid, {})
        if not status.get('finished') or status.get('state') not in (
                'finished', 'error'):
            problems.append('node %s accepted but not over: %s' % (
                uuid, status))
        elif status['state'] == 'error' and not status.get('error'):
            problems.append('node %s in error without a reason' % uuid)
    return problems


def _nothing_stuck_or_lost(history):
    problems = ['request %s (%s of %s) still %s' % (
        r.id, r.event, r.node_uuid, r.status)
        for r in history.ledger if r.status in OPEN]
    started = {r.node_uuid for r in history.ledger if r.event == st.START}
    problems += ['start of node %s accepted but not in the ledger' % u
                 for u in history.accepted - started]
    return problems


def _power_on_once(history):
    return [_power_text(history, uuid, n, 'on')
            for uuid, n in history.power_ons.items()
            if uuid in history.nodes and n > history.nodes[uuid].attempt]


def _power_off_once(history):
    return [_power_text(history, uuid, n, 'off')
            for uuid, n in history.power_offs.items()
            if uuid in history.nodes and n > history.nodes[uuid].attempt]


def _power_text(history, uuid, times, state):
    return 'node %s powered %s %d times in %d attempt(s)' % (
        uuid, state, times, history.nodes[uuid].attempt)


def _key(request, node, generation):
    return (request, node, generation)


def _attempts_match_commits(history):
    logged = {_key(a['request'], a['node'], a['generation']): a
              for a in history.attempts if a['outcome'] == 'committed'}
    table = {_key(r.request_id, r.node_uuid, r.generation): r
             for r in history.committed}
    problems = ['commit logged but not in the table: %s' % (a,)
                for k, a in logged.items() if k not in table]
    workers = {a['actor'] for a in history.attempts}
    for key, row in table.items():
        if (row.actor in workers and key not in logged and
                not row.actor.startswith(tuple(history.killed_members))):
            problems.append('commit by %s not logged as attempted: request '
                            '%s node %s %s->%s gen %d' % (
                                row.actor, row.request_id, row.node_uuid,
                                row.from_state, row.to_state,
                                row.generation))
    return problems


def _exit_codes(history):
    problems = []
    for name, code in history.exits.items():
        log = history.logs.get(name, '')
        if code == 0 or code == -9 and name in history.killed:
            continue
        if code == 1 and any(m in log for m in CLEAN_FAILURE):
            continue
        problems.append('%s exited %s:\n%s' % (name, code, log[-2000:]))
    return problems


def conclude(harness, driver, fault=None, allowed_errors=()):
    """Record the history, stop the cluster, check; print what was
    measured (and append it to ``$FAULT_RESULTS`` if set); return the
    violations, each error whose reason is not in ``allowed_errors``
    counting as one."""
    history = record(harness, driver, fault.killed if fault else ())
    history.exits = harness.stop()
    read_logs(history, harness)
    violations = check(history) + [
        'node %s: unexpected error %r' % (u, n.error)
        for u, n in history.nodes.items() if n.state == 'error' and
        not any(reason in (n.error or '') for reason in allowed_errors)]
    report = dict(json.loads(fault.line()) if fault else {},
                  **history.stats(), violations=len(violations))
    harness.history = history
    print('FAULT %s' % json.dumps(report, default=str))
    if os.environ.get('FAULT_RESULTS'):
        with open(os.environ['FAULT_RESULTS'], 'a') as out:
            out.write(json.dumps(report, default=str) + '\n')
    return violations
