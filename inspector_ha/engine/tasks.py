"""Tasks bound to transitions. Each returns the follow-up ``(event, error)``.

A task runs after its transition is committed and before its request is
marked done, so a redelivered request runs it again: tasks must be
reentrant. The strict ``process`` event's work is split: the hooks and
rules run once, in :meth:`Tasks.prepare`, before ``waiting ->
processing`` commits, and their result is recorded in that transaction;
the task only sends the recorded changes, which is reentrant, so a
redelivery resumes it (``doc/guarantees.md`` D3b).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from oslo_utils import strutils
import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha.db import models
from inspector_ha.db import ledger
from inspector_ha.db import rules as rules_db
from inspector_ha.fsm import states as st
from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import base
from inspector_ha.processing import changes as changes_mod
from inspector_ha.processing import pipeline as pipeline_mod
from inspector_ha.processing import ramdisk_logs
from inspector_ha.rules import engine as rules
from inspector_ha.engine import claims as claims_mod
from inspector_ha.engine import prepared as prepared_mod
from inspector_ha.engine import throttle as throttle_mod

LOG = logging.getLogger(__name__)
CANCELED = 'Canceled by operator'
POWER_ON = 'power-on'
POWER_OFF = 'power-off'
POWER_FIELDS = ['power_state', 'target_power_state']
#: What a task answers: the follow-up event (or None) and its error text.
Outcome = tuple[str | None, str | None]
#: ``announce(op, uuid, macs)``: a node's MACs to the firewall party.
Announce = Callable[[str, str, Iterable[str]], None]


class Tasks:
    """The tasks bound to transitions, and the processing preparation.

    ``announce(op, uuid, macs)`` tells the firewall party about a node's
    MACs; ``throttle`` is the reboot throttle; ``conf`` is read for its
    ``[processing]`` group; ``claims`` fence the power calls.
    """

    def __init__(self, *, ironic: ironic_client.Ironic,
                 store: db_api.Store, announce: Announce,
                 throttle: throttle_mod.RebootThrottle,
                 pipeline: pipeline_mod.Pipeline,
                 data_store: prepared_mod.DataStore,
                 conf: Any, claims: claims_mod.Claims) -> None:
        self._ironic = ironic
        self._claims = claims
        self._store = store
        self._announce = announce
        self._throttle = throttle
        self._pipeline = pipeline
        self._data_store = data_store
        self._conf = conf
        self._bound: dict[tuple[str, str], Callable[..., Outcome]] = {
            (st.START, st.STARTING): self.introspect,
            (st.PROCESS, st.PROCESSING): self.process,
            (st.ABORT, st.ABORTING): self.abort,
            (st.REAPPLY, st.REAPPLYING): self.reapply}

    def run(self, event: str, to_state: str, node: models.Node,
            request: models.Request | None,
            prepared: prepared_mod.Prepared | None = None) -> Outcome:
        """Run the task bound to ``event`` into ``to_state``, if any, with
        what :meth:`prepare` recorded."""
        task = self._bound.get((event, to_state))
        if task is None:
            return None, None
        return self._guarded(event, node, task, node, request, prepared)

    def _guarded(self, event: str, node: models.Node,
                 task: Callable[..., Outcome], *args: Any) -> Outcome:
        """``task(*args)``; a failure is the follow-up ``error``."""
        try:
            return task(*args)
        except retry.UNAVAILABLE_OR_STOPPING:
            raise
        except (base.HookError, ironic_client.Error) as exc:
            LOG.warning('Task %s of node %s failed: %s', event, node.uuid,
                        exc)
            return st.FAIL, str(exc)
        except Exception as exc:
            LOG.exception('Task %s of node %s crashed', event, node.uuid)
            return st.FAIL, 'Unexpected error: %s' % exc

    def introspect(self, node: models.Node, request: models.Request | None,
                   prepared: prepared_mod.Listed) -> Outcome:
        """Announce the MACs :meth:`prepare` listed (and recorded with the
        transition), set PXE boot and power on (once per attempt)."""
        if prepared.error is not None:
            return st.FAIL, prepared.error
        self._announce('add', node.uuid, prepared.macs)
        if node.manage_boot is not False:
            self._ironic.set_pxe_boot(node.uuid, persistent=self._persistent(
                node, request))
            self._throttle.run(self._power_on_once, node)
        return st.WAIT, None

    def _persistent(self, node: models.Node,
                    request: models.Request | None) -> bool:
        """Upstream's ``driver_info/force_persistent_boot_device``:
        ``Always`` (or a true value) sets PXE boot persistently; ``Default``
        and ``Never`` (or anything else) for the next boot only."""
        snapshot = ledger.payload(request).get('node') if request else None
        if snapshot is None:
            snapshot = self._ironic.get_node(
                node.uuid, fields=['driver_info']).to_dict(computed=False)
        value = (snapshot.get('driver_info') or {}).get(
            'force_persistent_boot_device', 'Default')
        if value in ('Always', 'Default', 'Never'):
            return value == 'Always'
        return strutils.bool_from_string(value, default=False)

    def _power_on_once(self, node: models.Node) -> None:
        """Reboot at most once per attempt. A start is redelivered if its
        worker died or froze mid-task (D3), so the power-on is claimed in
        SQL first, only while this delivery's write is the node's latest:
        a delivery that woke up after another took over does nothing, and
        one finding an earlier claim waits it out, then reboots only if
        Ironic shows the node off (the earlier delivery never sent it).
        The call is sent only within the claim's window (D3c)."""
        claim = self._claimed(node, POWER_ON, self._powered_on)
        if claim is not None:
            self._fenced(node, POWER_ON, self._ironic.reboot, claim)

    def _claimed(self, node: models.Node, effect: str,
                 done: Callable[[models.Node], bool]
                 ) -> claims_mod.Claim | None:
        """The claim under which this delivery is to perform ``effect``
        (:data:`POWER_ON` or :data:`POWER_OFF`) on ``node``, or None: it
        claims it in SQL, once per attempt; after an earlier claim (waited
        out), only if ``done(node)`` (Ironic's view) says the effect did
        not happen."""
        outcome, claim = self._claims.claim(node, effect)
        if claim is None or (outcome == ledger.TAKEN and done(node)):
            LOG.info('Not doing %s of node %s again for attempt %d: %s',
                     effect, node.uuid, node.attempt, outcome)
            return None
        return claim

    @staticmethod
    def _fenced(node: models.Node, effect: str,
                call: Callable[..., None], claim: claims_mod.Claim) -> None:
        """``call(uuid, fence=...)`` under ``claim``; a claim lost before
        the call was sent leaves the effect to whoever took it over."""
        try:
            call(node.uuid, fence=claim.check)
        except claims_mod.Lost as exc:
            LOG.info('Not doing %s of node %s: %s', effect, node.uuid, exc)

    def _powered_on(self, node: models.Node) -> bool:
        ironic_node = self._ironic.get_node(node.uuid, fields=POWER_FIELDS)
        return (ironic_node.power_state == 'power on' or
                bool(ironic_node.target_power_state))

    def read_ahead(self, conn: sa.Connection, request: models.Request,
                   node: models.Node) -> prepared_mod.Started | None:
        """What :meth:`prepare` reads for ``request``, read in the
        transaction that counts its delivery: the attempt as started and
        the rules, for ramdisk data the node is to process."""
        if st.target(node.state, request.event) != st.PROCESSING:
            return None
        try:
            return prepared_mod.as_started(conn, node)
        except sa.exc.SQLAlchemyError:
            raise
        except Exception:
            # NOTE: a record that cannot be read (say, written by another
            # release) must not undo the delivery's count, or the request
            # could never be dead-lettered: prepare reads it again.
            LOG.exception('Could not read the start of node %s ahead',
                          node.uuid)
            return None

    def prepare(self, event: str, to_state: str, node: models.Node,
                request: models.Request,
                ahead: prepared_mod.Started | None = None
                ) -> prepared_mod.Prepared | None:
        """Work done before the transition commits, recorded in its
        transaction: the node's ports (:class:`Listed`) for a start, a
        :class:`Processed` for ``waiting -> processing`` (hooks and rules
        run here, once, from ``ahead``, what :meth:`read_ahead` read, or
        read now), else None."""
        if (event, to_state) == (st.START, st.STARTING):
            return self._listed(node)
        if (event, to_state) != (st.PROCESS, st.PROCESSING):
            return None
        started = ahead
        if started is None:
            started = self._store.transaction(prepared_mod.as_started, node)
        data = ledger.payload(request)
        logs = ramdisk_logs.take(data)
        try:
            changes, ironic_node = self._changes(node, data, started)
        except retry.UNAVAILABLE_OR_STOPPING:
            raise
        except (base.HookError, ironic_client.Error) as exc:
            LOG.warning('Processing node %s failed: %s', node.uuid, exc)
            return self._failed(node, data, logs, str(exc))
        except Exception as exc:
            LOG.exception('Processing node %s crashed', node.uuid)
            return self._failed(node, data, logs, 'Unexpected error: %s' % exc)
        # NOTE: upstream's: an active node (permit_active_introspection)
        # keeps its power on.
        changes.power_off = (node.manage_boot is not False and
                             self._conf.processing.power_off and
                             ironic_node.provision_state not in
                             ironic_client.ACTIVE_STATES)
        changes.power_off_optional = ironic_node.provision_state == 'enroll'
        return prepared_mod.Processed(changes, data, self._data_store)

    def _listed(self, node: models.Node) -> prepared_mod.Listed:
        """The node's Ironic ports, or why they could not be listed (the
        start then fails with it, as upstream's)."""
        try:
            return prepared_mod.Listed(self._ironic.ports(node.uuid))
        except retry.UNAVAILABLE_OR_STOPPING:
            raise
        except ironic_client.Error as exc:
            LOG.warning('Listing the ports of node %s failed: %s', node.uuid,
                        exc)
            return prepared_mod.Listed(error=str(exc))
        except Exception as exc:
            LOG.exception('Listing the ports of node %s crashed', node.uuid)
            return prepared_mod.Listed(error='Unexpected error: %s' % exc)

    def _failed(self, node: models.Node, data: dict[str, Any],
                logs: str | None, error: str) -> prepared_mod.Processed:
        """Processing failed with ``error``: save the ramdisk's logs (as
        upstream does on a failure) and record the failure."""
        if logs is not None:
            ramdisk_logs.save(self._conf, logs, data, node.uuid)
        return prepared_mod.Processed(changes_mod.Changes.failed(error))

    def process(self, node: models.Node, request: models.Request | None,
                prepared: prepared_mod.Processed) -> Outcome:
        return self._apply(node, prepared.changes, again=False)

    def resume_processing(self, node: models.Node) -> Outcome | None:
        """Send again the changes recorded when ``node`` entered
        ``processing``; None if none were recorded (a node that entered
        it before this release)."""
        values = self._store.transaction(
            ledger.recorded, node.uuid, prepared_mod.PROCESSED, node.attempt)
        if values is None:
            return None
        LOG.info('Node %s: the process request met again; sending the '
                 'recorded changes again', node.uuid)
        changes = changes_mod.Changes.from_dict(values)
        return self._guarded(st.PROCESS, node, self._apply, node, changes,
                             True)

    def _apply(self, node: models.Node, changes: changes_mod.Changes,
               again: bool) -> Outcome:
        if changes.error:
            return st.FAIL, changes.error
        changes_mod.apply(self._ironic, node.uuid, changes, again)
        if changes.power_off:
            self._power_off_once(node, changes.power_off_optional)
        return st.FINISH, None

    def _power_off_once(self, node: models.Node, optional: bool) -> None:
        """Power off at most once per attempt (claimed in SQL like the
        power-on); a delivery finding an earlier claim powers off only if
        Ironic does not show the node off."""
        claim = self._claimed(node, POWER_OFF, self._powered_off)
        if claim is None:
            return
        try:
            self._fenced(node, POWER_OFF, self._ironic.power_off, claim)
        except ironic_client.Error as exc:
            # NOTE: upstream's: a node still in enroll (discovered) may
            # have no working power credentials yet.
            if not optional:
                raise
            LOG.info('Failed to power off node %s in enroll state, '
                     'ignoring: %s', node.uuid, exc)

    def _powered_off(self, node: models.Node) -> bool:
        ironic_node = self._ironic.get_node(node.uuid, fields=POWER_FIELDS)
        return (ironic_node.target_power_state == 'power off' or (
            ironic_node.power_state == 'power off' and
            not ironic_node.target_power_state))

    def abort(self, node: models.Node, request: models.Request | None,
              prepared: prepared_mod.Prepared | None = None) -> Outcome:
        if node.manage_boot is not False:
            self._ironic.power_off(node.uuid)
        return st.ABORT_END, CANCELED

    def reapply(self, node: models.Node, request: models.Request,
                prepared: prepared_mod.Prepared | None = None) -> Outcome:
        """Process the request's unprocessed data again; never power off.

        Runs every ``before_processing`` hook (a failure ends in error),
        then the hooks and rules, sends their changes and stores the
        processed data. Reentrant: a redelivery computes and sends the
        same changes again. Unlike upstream, ``started_at`` is left as it
        is: it stays the start of the introspection the data came from,
        and a node in ``reapplying`` keeps its ``finished_at``, so the
        timeout check never picks it (a crashed reapply is redelivered
        instead).
        """
        data = ledger.payload(request)
        failures = self._pipeline.before_processing(data)
        if failures:
            raise base.HookError(base.pre_hooks_failed(failures))
        changes, _ = self._changes(node, data)
        changes_mod.apply(self._ironic, node.uuid, changes, again=True)
        self._store.transaction(self._data_store.save, node.uuid, data, True)
        return st.FINISH, None

    def _changes(self, node: models.Node, data: dict[str, Any],
                 started: prepared_mod.Started | None = None
                 ) -> tuple[changes_mod.Changes, Any]:
        """``(Changes, Ironic node)``: the hooks' and rules' changes.

        ``started``'s node and port MACs, as they were when the
        introspection started, spare two Ironic calls; where they were
        not recorded (reapply, discovery, a start by 0.1.0) they are
        read from Ironic.
        """
        if started is None:
            started = prepared_mod.Started(rules=self._store.transaction(
                rules_db.list_all))
        ironic_node = started.snapshot or self._ironic.get_node(node.uuid)
        macs = started.macs
        if macs is None:
            macs = self._ironic.port_macs(node.uuid)
        context = base.NodeContext(self._ironic, ironic_node, macs,
                                   started.ports)
        self._pipeline.before_update(data, context)
        rules.apply(started.rules, context, data)
        return context.changes(), ironic_node


def error_for(event: str, state: str, payload: dict[str, Any]) -> str:
    """The error text recorded when ``event`` leads to ``error``."""
    if st.is_deja_vu(state, event):
        return ('Request %r delivered again after its strict transition '
                'was applied; refusing to process twice' % event)
    if event == st.TIMEOUT:
        return 'Introspection timeout'
    if event == st.ABORT:
        return CANCELED
    return payload.get('error') or 'Unknown error'
