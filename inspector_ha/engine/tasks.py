"""Tasks bound to transitions. Each returns the follow-up ``(event, error)``.

A task runs after its transition is committed and before its request is
marked done, so a redelivered request runs it again: tasks must be
reentrant. The strict ``process`` event's work is split: the hooks and
rules run once, in :meth:`Tasks.prepare`, before ``waiting ->
processing`` commits, and their result is recorded in that transaction;
the task only sends the recorded changes, which is reentrant, so a
redelivery resumes it (``doc/guarantees.md`` D3b).
"""

import logging

from openstack.baremetal.v1 import node as ironic_node_mod
from oslo_utils import strutils
import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.db import lookup
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db import requests
from inspector_ha.fsm import states as st
from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import base
from inspector_ha.processing import changes as changes_mod
from inspector_ha.processing import ramdisk_logs
from inspector_ha.rules import engine as rules

LOG = logging.getLogger(__name__)
CANCELED = 'Canceled by operator'
POWER_ON = 'power-on'
POWER_OFF = 'power-off'
#: The ledger row recording an attempt's processing result.
PROCESSED = 'processed'
POWER_FIELDS = ['power_state', 'target_power_state']


class Tasks:
    def __init__(self, service):
        self._svc = service
        self._bound = {(st.START, st.STARTING): self.introspect,
                       (st.PROCESS, st.PROCESSING): self.process,
                       (st.ABORT, st.ABORTING): self.abort,
                       (st.REAPPLY, st.REAPPLYING): self.reapply}

    def run(self, event, to_state, node, request, prepared=None):
        """Run the task bound to ``event`` into ``to_state``, if any, with
        what :meth:`prepare` recorded."""
        task = self._bound.get((event, to_state))
        if task is None:
            return None, None
        return self._guarded(event, node, task, node, request, prepared)

    def _guarded(self, event, node, task, *args):
        """``task(*args)``; a failure is the follow-up ``error``."""
        try:
            return task(*args)
        except (retry.BackendUnavailable, retry.Interrupted):
            raise
        except (base.HookError, ironic_client.Error) as exc:
            LOG.warning('Task %s of node %s failed: %s', event, node.uuid,
                        exc)
            return st.FAIL, str(exc)
        except Exception as exc:
            LOG.exception('Task %s of node %s crashed', event, node.uuid)
            return st.FAIL, 'Unexpected error: %s' % exc

    def introspect(self, node, request, prepared=None):
        svc = self._svc
        macs = svc.ironic.port_macs(node.uuid)
        svc.store.transaction(_replace_macs, node.uuid, macs)
        svc.announce_whitelist('add', node.uuid, macs)
        if node.manage_boot is not False:
            svc.ironic.set_pxe_boot(node.uuid, persistent=self._persistent(
                node, request))
            svc.throttle.run(self._power_on_once, node)
        return st.WAIT, None

    def _persistent(self, node, request):
        """Upstream's ``driver_info/force_persistent_boot_device``:
        ``Always`` (or a true value) sets PXE boot persistently; ``Default``
        and ``Never`` (or anything else) for the next boot only."""
        snapshot = requests.payload(request).get('node') if request else None
        if snapshot is None:
            snapshot = self._svc.ironic.get_node(
                node.uuid, fields=['driver_info']).to_dict(computed=False)
        value = (snapshot.get('driver_info') or {}).get(
            'force_persistent_boot_device', 'Default')
        if value in ('Always', 'Default', 'Never'):
            return value == 'Always'
        return strutils.bool_from_string(value, default=False)

    def _power_on_once(self, node):
        """Reboot at most once per attempt. A start is redelivered if its
        worker died or froze mid-task (D3), so the power-on is claimed in
        SQL first, only while this delivery's write is the node's latest:
        a delivery that woke up after another took over does nothing, and
        one finding an earlier claim reboots only if Ironic shows the node
        off (the earlier delivery died before it)."""
        if self._claimed(node, POWER_ON, self._powered_on):
            self._svc.ironic.reboot(node.uuid)

    def _claimed(self, node, effect, done):
        """Whether this delivery is to perform ``effect`` (:data:`POWER_ON`
        or :data:`POWER_OFF`) on ``node``: it claims it in SQL, once per
        attempt; after an earlier claim, only if ``done(node)`` (Ironic's
        view) says the effect did not happen."""
        claim = _claim(self._svc.store, node, effect)
        if claim == requests.STALE or (
                claim == requests.TAKEN and done(node)):
            LOG.info('Not doing %s of node %s again for attempt %d: %s',
                     effect, node.uuid, node.attempt, claim)
            return False
        return True

    def _powered_on(self, node):
        ironic_node = self._svc.ironic.get_node(node.uuid,
                                                fields=POWER_FIELDS)
        return (ironic_node.power_state == 'power on' or
                bool(ironic_node.target_power_state))

    def prepare(self, event, to_state, node, request):
        """Work done before the transition commits, recorded in its
        transaction: a :class:`Processed` for ``waiting -> processing``
        (hooks and rules run here, once), else None."""
        if (event, to_state) != (st.PROCESS, st.PROCESSING):
            return None
        snapshot, macs = self._svc.store.transaction(_as_started, node)
        data = requests.payload(request)
        logs = ramdisk_logs.take(data)
        try:
            changes, ironic_node = self._changes(node, data, snapshot, macs)
        except (retry.BackendUnavailable, retry.Interrupted):
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
                             self._svc.conf.processing.power_off and
                             ironic_node.provision_state not in
                             ironic_client.ACTIVE_STATES)
        changes.power_off_optional = ironic_node.provision_state == 'enroll'
        return Processed(changes, data, self._svc.data_store)

    def _failed(self, node, data, logs, error):
        """Processing failed with ``error``: save the ramdisk's logs (as
        upstream does on a failure) and record the failure."""
        if logs is not None:
            ramdisk_logs.save(self._svc.conf, logs, data, node.uuid)
        return Processed(changes_mod.Changes.failed(error))

    def process(self, node, request, prepared):
        return self._apply(node, prepared.changes, again=False)

    def resume_processing(self, node):
        """Send again the changes recorded when ``node`` entered
        ``processing``; None if none were recorded (a node that entered
        it before this release)."""
        values = self._svc.store.transaction(
            requests.recorded, node.uuid, PROCESSED, node.attempt)
        if values is None:
            return None
        LOG.info('Node %s: the process request met again; sending the '
                 'recorded changes again', node.uuid)
        changes = changes_mod.Changes.from_dict(values)
        return self._guarded(st.PROCESS, node, self._apply, node, changes,
                             True)

    def _apply(self, node, changes, again):
        if changes.error:
            return st.FAIL, changes.error
        changes_mod.apply(self._svc.ironic, node.uuid, changes, again)
        if changes.power_off:
            self._power_off_once(node, changes.power_off_optional)
        return st.FINISH, None

    def _power_off_once(self, node, optional):
        """Power off at most once per attempt (claimed in SQL like the
        power-on); a delivery finding an earlier claim powers off only if
        Ironic does not show the node off."""
        if not self._claimed(node, POWER_OFF, self._powered_off):
            return
        try:
            self._svc.ironic.power_off(node.uuid)
        except ironic_client.Error as exc:
            # NOTE: upstream's: a node still in enroll (discovered) may
            # have no working power credentials yet.
            if not optional:
                raise
            LOG.info('Failed to power off node %s in enroll state, '
                     'ignoring: %s', node.uuid, exc)

    def _powered_off(self, node):
        ironic_node = self._svc.ironic.get_node(node.uuid,
                                                fields=POWER_FIELDS)
        return (ironic_node.target_power_state == 'power off' or (
            ironic_node.power_state == 'power off' and
            not ironic_node.target_power_state))

    def abort(self, node, request, prepared=None):
        if node.manage_boot is not False:
            self._svc.ironic.power_off(node.uuid)
        return st.ABORT_END, CANCELED

    def reapply(self, node, request, prepared=None):
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
        svc = self._svc
        data = requests.payload(request)
        failures = svc.pipeline.before_processing(data)
        if failures:
            raise base.HookError(base.pre_hooks_failed(failures))
        changes, _ = self._changes(node, data)
        changes_mod.apply(svc.ironic, node.uuid, changes, again=True)
        svc.store.transaction(svc.data_store.save, node.uuid, data, True)
        return st.FINISH, None

    def _changes(self, node, data, snapshot=None, macs=None):
        """``(Changes, Ironic node)``: the hooks' and rules' changes.

        ``snapshot`` and ``macs``, the node and its port MACs as they were
        when the introspection started, spare two Ironic calls; without
        them (reapply, discovery) they are read from Ironic.
        """
        svc = self._svc
        ironic_node = snapshot or svc.ironic.get_node(node.uuid)
        if macs is None:
            macs = svc.ironic.port_macs(node.uuid)
        context = base.NodeContext(svc.ironic, ironic_node, macs)
        svc.pipeline.before_update(data, context)
        rules.apply(svc.store, context, data)
        return context.changes(), ironic_node


class Processed:
    """The result of processing, recorded with ``waiting -> processing``:
    the changes to send (``PROCESSED`` ledger row of the attempt) and,
    when processing succeeded, the processed data."""

    def __init__(self, changes, data=None, data_store=None):
        self.changes = changes
        self._data = data
        self._data_store = data_store

    def record(self, session, node):
        requests.record_once(session, node.uuid, PROCESSED, node.attempt,
                             self.changes.to_dict())
        if self._data_store is not None:
            self._data_store.save(session, node.uuid, self._data, True)


def _as_started(session, node):
    """``(Ironic node snapshot or None, MACs or None)`` recorded when this
    attempt started (by the API and by :meth:`Tasks.introspect`)."""
    snapshot = None
    for request in requests.for_node(session, node.uuid):
        if request.event == st.START and request.attempt == node.attempt:
            snapshot = requests.payload(request).get('node')
    if snapshot is None:
        return None, None
    macs = session.scalars(sa.select(models.Attribute.value).where(
        models.Attribute.node_uuid == node.uuid,
        models.Attribute.name == lookup.MAC)).all()
    return ironic_node_mod.Node.existing(**snapshot), list(macs)


def _claim(store, node, effect):
    try:
        return store.transaction(requests.claim_once, node, effect)
    except sa.exc.IntegrityError:
        return requests.TAKEN


def _replace_macs(session, uuid, macs):
    session.execute(sa.delete(models.Attribute).where(
        models.Attribute.node_uuid == uuid,
        models.Attribute.name == lookup.MAC))
    nodes.add_attributes(session, uuid, lookup.MAC, macs)


def error_for(event, state, payload):
    """The error text recorded when ``event`` leads to ``error``."""
    if st.is_deja_vu(state, event):
        return ('Request %r delivered again after its strict transition '
                'was applied; refusing to process twice' % event)
    if event == st.TIMEOUT:
        return 'Introspection timeout'
    if event == st.ABORT:
        return CANCELED
    return payload.get('error') or 'Unknown error'
