"""Tasks bound to transitions. Each returns the follow-up ``(event, error)``.

A task runs after its transition is committed and before its request is
marked done, so a redelivered request runs it again: tasks must be
reentrant, except the one bound to the strict ``process`` event, which
the machine never runs twice (it routes the redelivery to ``error``).
"""

import logging

from openstack.baremetal.v1 import node as ironic_node_mod
import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.db import lookup
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.db import requests
from inspector_ha.fsm import states as st
from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import base
from inspector_ha.rules import engine as rules

LOG = logging.getLogger(__name__)
CANCELED = 'Canceled by operator'
POWER_ON = 'power-on'
POWER_FIELDS = ['power_state', 'target_power_state']
PRE_HOOKS_FAILED = ('The following failures happened during running '
                    'pre-processing hooks:\n')


class Tasks:
    def __init__(self, service):
        self._svc = service
        self._bound = {(st.START, st.STARTING): self.introspect,
                       (st.PROCESS, st.PROCESSING): self.process,
                       (st.ABORT, st.ABORTING): self.abort,
                       (st.REAPPLY, st.REAPPLYING): self.reapply}

    def run(self, event, to_state, node, request):
        """Run the task bound to ``event`` into ``to_state``, if any."""
        task = self._bound.get((event, to_state))
        if task is None:
            return None, None
        try:
            return task(node, request)
        except (retry.BackendUnavailable, retry.Interrupted):
            raise
        except (base.HookError, ironic_client.Error) as exc:
            LOG.warning('Task %s of node %s failed: %s', event, node.uuid,
                        exc)
            return st.FAIL, str(exc)
        except Exception as exc:
            LOG.exception('Task %s of node %s crashed', event, node.uuid)
            return st.FAIL, 'Unexpected error: %s' % exc

    def introspect(self, node, request):
        svc = self._svc
        macs = svc.ironic.port_macs(node.uuid)
        svc.store.transaction(_replace_macs, node.uuid, macs)
        svc.announce_whitelist('add', node.uuid, macs)
        if node.manage_boot is not False:
            svc.ironic.set_pxe_boot(node.uuid)
            svc.throttle.run(self._power_on_once, node)
        return st.WAIT, None

    def _power_on_once(self, node):
        """Reboot at most once per attempt. A start is redelivered if its
        worker died or froze mid-task (D3), so the power-on is claimed in
        SQL first, only while this delivery's write is the node's latest:
        a delivery that woke up after another took over does nothing, and
        one finding an earlier claim reboots only if Ironic shows the node
        off (the earlier delivery died before it)."""
        svc = self._svc
        claim = _claim(svc.store, node, POWER_ON)
        if claim == requests.STALE or (
                claim == requests.TAKEN and self._powered_on(node)):
            LOG.info('Not powering node %s on again for attempt %d: %s',
                     node.uuid, node.attempt, claim)
            return
        svc.ironic.reboot(node.uuid)

    def _powered_on(self, node):
        ironic_node = self._svc.ironic.get_node(node.uuid,
                                                fields=POWER_FIELDS)
        return (ironic_node.power_state == 'power on' or
                bool(ironic_node.target_power_state))

    def process(self, node, request):
        svc = self._svc
        snapshot, macs = svc.store.transaction(_as_started, node)
        ironic_node = self._update(node, requests.payload(request),
                                   snapshot, macs)
        if node.manage_boot is not False and svc.conf.processing.power_off:
            _power_off(svc.ironic, ironic_node)
        return st.FINISH, None

    def abort(self, node, request):
        if node.manage_boot is not False:
            self._svc.ironic.power_off(node.uuid)
        return st.ABORT_END, CANCELED

    def reapply(self, node, request):
        """Process the request's unprocessed data again; never power off.

        Runs every ``before_processing`` hook (a failure ends in error),
        then what :meth:`process` does except powering the node off.
        Unlike upstream, ``started_at`` is left as it is: it stays the
        start of the introspection the data came from, and a node in
        ``reapplying`` keeps its ``finished_at``, so the timeout check
        never picks it (a crashed reapply is redelivered instead).
        """
        data = requests.payload(request)
        failures = self._svc.pipeline.before_processing(data)
        if failures:
            raise base.HookError(PRE_HOOKS_FAILED + '\n'.join(failures))
        self._update(node, data)
        return st.FINISH, None

    def _update(self, node, data, snapshot=None, macs=None):
        """Hooks, rules, one PATCH to Ironic, processed data stored.

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
        rules.apply(svc.store, svc.ironic, context, data)
        context.commit()
        svc.store.transaction(svc.data_store.save, node.uuid, data, True)
        return ironic_node


def _power_off(ironic, ironic_node):
    """Upstream's: a node still in ``enroll`` (discovered) may have no
    working power credentials yet; failing to power it off is not an
    error."""
    try:
        ironic.power_off(ironic_node.id)
    except ironic_client.Error as exc:
        if ironic_node.provision_state != 'enroll':
            raise
        LOG.info('Failed to power off node %s in enroll state, ignoring: '
                 '%s', ironic_node.id, exc)


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
