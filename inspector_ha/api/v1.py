"""The v1 endpoints of the introspection path."""

import copy
import json
import logging

import flask
from openstack import exceptions as sdk_exc
from oslo_utils import strutils
from oslo_utils import uuidutils

from inspector_ha.api import checks
from inspector_ha.api import errors
from inspector_ha.api import intake
from inspector_ha.api import versions
from inspector_ha.common import timeutils
from inspector_ha.db import lookup
from inspector_ha.fsm import states as st
from inspector_ha.ironic import client as ironic_client
from inspector_ha.processing import base
from inspector_ha.processing import not_found
from inspector_ha.processing.hooks import interfaces

LOG = logging.getLogger(__name__)


class V1:
    def __init__(self, service):
        self._svc = service
        self._not_found = not_found.load(service.conf, service.ironic)

    def register(self, app):
        rules = [('/v1/introspection/<node_id>', self.start, ['POST']),
                 ('/v1/introspection/<node_id>', self.status, ['GET']),
                 ('/v1/introspection/<node_id>/abort', self.abort,
                  ['POST']),
                 ('/v1/continue', self.continue_, ['POST'])]
        for path, view, methods in rules:
            app.add_url_rule(path, view.__name__ + path, view,
                             methods=methods, strict_slashes=False)

    def _tx(self, func, *args):
        """Run ``func`` in a store transaction; what it raises maps to
        HTTP codes through :data:`inspector_ha.api.errors.CODES`."""
        return self._svc.store.transaction(func, *args)

    def _publish(self, request_id, uuid, event):
        if request_id is not None:
            self._svc.publisher.publish(request_id, uuid, event)

    def start(self, node_id):
        manage_boot = _manage_boot(self._svc.conf)
        node = self._ironic_node(node_id)
        checks.check_startable(self._svc, node, manage_boot)
        bmcs = checks.bmc_addresses(self._svc.conf, node)
        request_id = self._tx(intake.start, node.id, manage_boot, bmcs,
                              self._svc.member_id, self._svc.data_store,
                              node.to_dict(computed=False))
        self._publish(request_id, node.id, st.START)
        return accepted()

    def status(self, node_id):
        uuid = self._uuid(node_id)
        return flask.jsonify(status_of(self._tx(intake.node, uuid)))

    def abort(self, node_id):
        uuid = self._uuid(node_id)
        request_id = self._tx(intake.event, uuid, st.ABORT)
        self._publish(request_id, uuid, st.ABORT)
        return accepted()

    def continue_(self):
        data = json_object()
        data.pop('logs', None)
        raw = copy.deepcopy(data)
        failures = self._svc.pipeline.before_processing(data)
        uuid = self._lookup(data, failures)
        if uuid is None:
            return self._enroll(data, raw)
        if failures:
            message = _failure_text(failures)
            request_id = self._tx(intake.event, uuid, st.FAIL,
                                  {'error': message})
            self._publish(request_id, uuid, st.FAIL)
            raise errors.ApiError(message, 400)
        request_id = self._tx(intake.process, uuid, data, raw,
                              self._svc.data_store)
        self._publish(request_id, uuid, st.PROCESS)
        return flask.jsonify({'uuid': uuid})

    def _lookup(self, data, failures):
        """The node's UUID; None if none matches and the node-not-found
        hook is to run (not when a pre-processing hook failed)."""
        macs = interfaces.lookup_macs(data)
        bmcs = interfaces.lookup_bmcs(data)
        try:
            return self._svc.store.transaction(lookup.find, macs, bmcs)
        except lookup.NotFound:
            if failures:
                raise errors.ApiError(_failure_text(failures)) from None
            if self._not_found is not None:
                return None
            raise errors.ApiError(
                'Could not find a node for attributes %s' %
                {'bmc_address': bmcs, 'mac': macs}, 404) from None
        except lookup.Ambiguous as exc:
            raise errors.ApiError(str(exc), 400) from None

    def _enroll(self, data, raw):
        try:
            uuid = self._not_found(data)
        except (base.HookError, ironic_client.Error) as exc:
            raise errors.ApiError(_failure_text(
                ['Node not found hook failed: %s' % exc])) from None
        try:
            request_id = self._tx(
                intake.enroll, uuid, data, raw, self._svc.data_store,
                interfaces.lookup_macs(data), interfaces.lookup_bmcs(data),
                self._svc.member_id)
        except Exception:
            self._forget(uuid)
            raise
        self._publish(request_id, uuid, st.PROCESS)
        return flask.jsonify({'uuid': uuid})

    def _forget(self, uuid):
        """Delete a node just enrolled whose row could not be written, so
        that the ramdisk's retry can enroll it again."""
        try:
            self._svc.ironic.delete_node(uuid)
        except Exception:
            LOG.exception('Cannot delete node %s, enrolled by discovery '
                          'but not recorded', uuid)

    def _ironic_node(self, node_id):
        try:
            return self._svc.ironic.get_node(node_id)
        except ironic_client.NotFound:
            raise errors.ApiError('Node %s was not found in Ironic' %
                                  node_id, 404) from None
        except sdk_exc.BadRequestException as exc:
            # NOTE: Ironic refuses an identifier that is neither a UUID nor
            # a valid name with 400; upstream's text for it.
            raise errors.ApiError('Cannot get node %s: %s' %
                                  (node_id, exc)) from None

    def _uuid(self, node_id):
        if uuidutils.is_uuid_like(node_id):
            return node_id
        return self._ironic_node(node_id).id


def status_of(node):
    return {'uuid': node.uuid, 'state': node.state,
            'finished': node.finished_at is not None,
            'started_at': timeutils.isoformat(node.started_at),
            'finished_at': timeutils.isoformat(node.finished_at),
            'error': node.error,
            'links': versions.link('/v1/introspection/' + node.uuid)}


def accepted():
    return flask.Response('{}\n', status=202, mimetype='application/json')


def _manage_boot(conf):
    value = flask.request.args.get('manage_boot', 'true')
    try:
        manage_boot = strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise errors.ApiError('Invalid boolean value for manage_boot: %s'
                              % value) from None
    if manage_boot and not conf.can_manage_boot:
        raise errors.ApiError('Managed boot is requested, but this '
                              'installation cannot manage boot '
                              '(can_manage_boot set to False)')
    return manage_boot


def json_object():
    raw = flask.request.get_data(cache=False)
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise errors.ApiError('Invalid JSON body: %s' % exc) from None
    if not isinstance(data, dict):
        raise errors.ApiError('Invalid data: expected a JSON object, got '
                              '%s' % type(data).__name__)
    return data


def _failure_text(failures):
    return ('The following failures happened during running pre-processing '
            'hooks:\n%s' % '\n'.join(failures))
