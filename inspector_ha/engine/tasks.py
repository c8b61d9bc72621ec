"""Tasks bound to transitions. Each returns the follow-up ``(event, error)``.

A task runs after its transition is committed and before its request is
marked done, so a redelivered request runs it again: tasks must be
reentrant, except the one bound to the strict ``process`` event, which
the machine never runs twice (it routes the redelivery to ``error``).
"""

import logging

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
        if node.manage_boot is not False:
            svc.ironic.set_pxe_boot(node.uuid)
            svc.throttle.run(svc.ironic.reboot, node.uuid)
        return st.WAIT, None

    def process(self, node, request):
        svc = self._svc
        ironic_node = self._update(node, requests.payload(request))
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

    def _update(self, node, data):
        """Hooks, rules, one PATCH to Ironic, processed data stored."""
        svc = self._svc
        ironic_node = svc.ironic.get_node(node.uuid)
        context = base.NodeContext(svc.ironic, ironic_node,
                                   svc.ironic.port_macs(node.uuid))
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
