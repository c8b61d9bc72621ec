"""Ironic's own in-band inspection (the ``agent`` inspect interface), the
system a site on Ironic 33 or later picks instead of ironic-inspector
(issue 56), measured as ``batches.run`` measures inspector-ha and 12.5:
the same nodes and ramdisk bodies, ramdisks that retry as
ironic-python-agent 13 does, every Ironic process's CPU, start and
finish latency.

Two layouts: one Ironic process inspecting (SQLite), and ``ironic-api``
with two ``ironic-conductor`` processes (JSON-RPC, MariaDB, the hash
ring spreading the nodes over both). The fault: one conductor SIGKILLed
mid-batch.
"""

import datetime
import signal
import subprocess
import time
from concurrent import futures

import sqlalchemy as sa

import batches
import ironic_split
import load
import measure
import testpath  # noqa: F401  (tests/functional on sys.path)
import backends
import ironic_server
import ramdisk
import servers

HEADERS = {'X-OpenStack-Ironic-API-Version': 'latest'}
#: The nodes whose ramdisk has booted: powered on while Ironic waits for
#: it (a real ramdisk boots for minutes; it never posts before that).
WAITING = sa.text("SELECT uuid FROM nodes WHERE power_state = 'power on' "
                  "AND provision_state = 'inspect wait'")
STATES = sa.text('SELECT uuid, provision_state, inspection_finished_at, '
                 'last_error FROM nodes')
UNDER_WAY = ('inspecting', 'inspect wait')
FINISHED = 'manageable'
FAILED = 'inspect failed'
#: A node whose ``inspect`` call Ironic did not accept (not 202).
NOT_STARTED = 'inspect not accepted'


class Ramdisks(load.TimedRamdisks):
    """Ramdisks posting to Ironic's ``/v1/continue_inspection``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.booted = WAITING

    def _post_once(self, payload):
        return self.outcomes.post(
            next(self._apis) + '/v1/continue_inspection',
            not_retried=load.NOT_RETRIED, json=payload, headers=HEADERS,
            timeout=ramdisk.IPA_TIMEOUT)


class SplitInspectingIronic(ironic_split.SplitIronic):
    """``ironic-api`` and ``conductors`` conductors on MariaDB, each
    inspecting with the ``agent`` interface."""

    name = 'ironic-split-inspecting'
    #: Connections each of the three processes keeps and may add, within
    #: MariaDB's 151.
    DB_POOL = 20

    def __init__(self, conductors=2, pool_size=300):
        super().__init__(pool_size=pool_size, db_pool_size=self.DB_POOL)
        self.extra_conf = self.extra_conf.replace(
            'max_overflow = %d' % ironic_split.db_overflow(self.DB_POOL),
            'max_overflow = %d' % self.DB_POOL) + \
            ironic_server.INSPECTING_CONF.format(
                hooks=ironic_server.BUILTIN_HOOKS, tmpdir=self.tmpdir)
        self.count = conductors
        self.conductors = []

    def _spawn_conductor(self):
        for index in range(self.count):
            # NOTE: a conductor registers as <host>:<JSON-RPC port>, so
            # each gets a port of its own (the first, the shared file's).
            own = self.tmpdir / ('conductor-%d.conf' % index)
            own.write_text('' if index == 0 else '[json_rpc]\nport = %d\n'
                           % backends.free_port())
            log = self.tmpdir / ('ironic-conductor-%d.log' % index)
            with open(log, 'ab') as out:
                self.conductors.append(subprocess.Popen(
                    [str(self.venv / 'bin' / 'ironic-conductor'),
                     '--config-file', str(self.conf_path),
                     '--config-file', str(own)], cwd=self.tmpdir,
                    stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, start_new_session=True))
        self.conductor = self.conductors[0]

    @property
    def procs(self):
        return [self.proc, *self.conductors]

    def stop(self, grace=10):
        servers.Server.stop(self, grace)
        for conductor in self.conductors:
            servers.terminate(conductor, grace)

    def kill(self):
        servers.Server.kill(self)
        for conductor in self.conductors:
            servers.kill_group(conductor)


def start_all(url, uuids, concurrency):
    """``inspect`` every node, ``concurrency`` at a time: (outcomes,
    accepted UUIDs)."""
    outcomes = measure.Outcomes()

    def one(uuid):
        return uuid, outcomes.request(
            'PUT', '%s/v1/nodes/%s/states/provision' % (url, uuid),
            json={'target': 'inspect'}, headers=HEADERS, timeout=120)

    with futures.ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, uuids))
    return outcomes, [uuid for uuid, code in results if code == 202]


def _epoch(value):
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    return value.replace(tzinfo=datetime.timezone.utc).timestamp()


def node_states(database_url, uuids):
    """``{uuid: row}`` of the nodes, read from Ironic's database."""
    engine = sa.create_engine(database_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return {row.uuid: row for row in conn.execute(STATES)
                    if row.uuid in uuids}
    finally:
        engine.dispose()


def wait_all(database_url, uuids, timeout, interval=1.0):
    """Until no node is under inspection, or ``timeout`` seconds: the
    nodes' rows and the sorted epoch seconds of their finish."""
    wanted, began = set(uuids), time.monotonic()
    while time.monotonic() - began < timeout:
        rows = node_states(database_url, wanted)
        if not any(r.provision_state in UNDER_WAY for r in rows.values()):
            break
        time.sleep(interval)
    rows = node_states(database_url, wanted)
    return rows, sorted(_epoch(r.inspection_finished_at)
                        for r in rows.values()
                        if r.provision_state == FINISHED and
                        r.inspection_finished_at)


def outcome_of(rows, uuids):
    """Finished, failed and stuck nodes, as ``load.outcome_of`` counts."""
    errors = {u: rows[u].last_error for u in uuids
              if u in rows and rows[u].provision_state == FAILED}
    stuck = {}
    for uuid in uuids:
        state = rows[uuid].provision_state if uuid in rows else NOT_STARTED
        if state not in (FINISHED, FAILED):
            stuck[state] = stuck.get(state, 0) + 1
    return {'finished_ok': sum(1 for u in uuids if u in rows and
                               rows[u].provision_state == FINISHED),
            'error': len(errors), 'stuck': sum(stuck.values()),
            'stuck_by_state': stuck,
            'error_samples': sorted({str(e)[:200] for e in
                                     errors.values()})[:5]}


def run(ironic, nodes, args, fault=None):
    """Inspect every node of ``nodes`` (``{uuid: ramdisk payload}``) with
    Ironic's own interface; measure. ``fault(ironic)``, if given, is
    called once a third of the nodes finished."""
    uuids, count = list(nodes), len(nodes)
    groups = batches.ironic_groups(ironic)
    idle = batches.with_totals(batches.measure_idle(
        groups, args.settle, args.idle), [])
    disks = Ramdisks(ironic.database_url, [ironic.url], nodes,
                     args.concurrency, args.poll_interval, **ramdisk.IPA13)
    meter = measure.CpuMeter(groups)
    disks.start()
    meter.start()
    began_wall, began = time.time(), time.monotonic()
    start, accepted = start_all(ironic.url, uuids, args.concurrency)
    log = 'all %d inspections asked for after %.1f s'
    batches.log(log % (count, time.monotonic() - began))
    if fault is not None:
        _when_a_third_finished(ironic, uuids, args.timeout)
        fault(ironic)
    rows, finished_at = wait_all(ironic.database_url, accepted,
                                 args.timeout)
    cpu = batches.with_totals(meter.stop(), [])
    disks.stop()
    outcome = outcome_of(rows, uuids)
    if fault is not None:
        outcome['how_lost'] = how_lost(ironic, rows, uuids)
    elapsed = (finished_at[-1] - began_wall if finished_at
               else time.monotonic() - began)
    batches.log('batch done in %.1f s: %s' % (elapsed, outcome))
    return {
        'nodes': count, 'concurrency': args.concurrency,
        'elapsed_s': round(elapsed, 2),
        'nodes_per_s': round(outcome['finished_ok'] / elapsed, 2),
        'not_started': count - len(accepted),
        'ramdisks_gave_up': len(disks.gave_up),
        'outcome': outcome,
        'start': start.report(), 'continue': disks.outcomes.report(),
        # NOTE: a killed process's CPU leaves the sums: none is given.
        'cpu_s': None if fault else cpu, 'idle_cpu_s': idle,
        'cpu_ms_per_node': None if fault else batches.per_node_ms(
            cpu, count),
        'progress_fraction_done_at_s': load.progress(finished_at,
                                                     began_wall)}


def how_lost(ironic, rows, uuids):
    """``{state and last event of the node's history: count}`` of the
    nodes not ``manageable`` (the history, since Ironic's power sync
    clears ``last_error``)."""
    found = {}
    for uuid in uuids:
        state = rows[uuid].provision_state if uuid in rows else NOT_STARTED
        if state == FINISHED:
            continue
        events = ironic.request('GET', '/v1/nodes/%s/history' % uuid)
        last = (events.get('history') or [{}])[-1].get('event', 'none')
        key = '%s; last event: %s' % (state, str(last)[:120])
        found[key] = found.get(key, 0) + 1
    return found


def _when_a_third_finished(ironic, uuids, timeout):
    backends.wait_for(lambda: sum(
        1 for r in node_states(ironic.database_url, set(uuids)).values()
        if r.provision_state == FINISHED) >= len(uuids) // 3, timeout,
        interval=0.2)


def kill_a_conductor(ironic):
    """SIGKILL the second conductor (the fault of issue 56)."""
    victim = ironic.conductors[1]
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    batches.log('SIGKILLed ironic-conductor %d' % victim.pid)


def run_one_process(args):
    with ironic_server.InspectingIronic() as ironic:
        nodes = batches.create_nodes(ironic, args.nodes,
                                     real_size=batches.real_size(args))
        result = run(ironic, nodes, args)
    result['deployment'] = ('Ironic 39 inspecting itself: one process, '
                            'SQLite, agent inspect interface')
    return result


def run_split(args, fault=None):
    with SplitInspectingIronic() as ironic:
        nodes = batches.create_nodes(ironic, args.nodes,
                                     real_size=batches.real_size(args))
        result = run(ironic, nodes, args, fault=fault)
    result['deployment'] = ('Ironic 39 inspecting itself: ironic-api and '
                            'two ironic-conductors, JSON-RPC, MariaDB')
    return result
