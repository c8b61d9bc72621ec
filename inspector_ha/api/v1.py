"""The v1 endpoints of the introspection path."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import flask
from oslo_utils import strutils

from inspector_ha.api import active
from inspector_ha.api import body
from inspector_ha.api import checks
from inspector_ha.api import errors
from inspector_ha.api import intake
from inspector_ha.api import ramdisk
from inspector_ha.api import versions
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.common import timeutils
from inspector_ha.db import lookup
from inspector_ha.fsm import states as st
from inspector_ha.ironic import bmc
from inspector_ha.processing import base
from inspector_ha.processing import not_found
from inspector_ha.processing import ramdisk_data
from inspector_ha.processing import ramdisk_logs

if TYPE_CHECKING:
    import sqlalchemy as sa
    from oslo_config import cfg

    from inspector_ha.api import nodes as nodes_mod
    from inspector_ha.coordination import releases as releases_mod
    from inspector_ha.db import models
    from inspector_ha.processing import pipeline as pipeline_mod

LOG = logging.getLogger(__name__)
LOOKUP_ERROR = 'Look up error: Could not find a node for attributes %s'


class V1:
    """Start, status and abort of one node, and the ramdisk's
    ``/v1/continue``.

    :param nodes: the shared :class:`~inspector_ha.api.nodes.Nodes`.
    :param conf: the configuration (``[processing]``, boot, BMC fields).
    :param pipeline: the processing hooks (``before_processing``).
    :param data_store: where introspection data is kept.
    :param releases: which wire forms every member reads.
    :param member_id: this process, recorded on the requests it takes.
    """

    def __init__(self, nodes: nodes_mod.Nodes, conf: cfg.ConfigOpts,
                 pipeline: pipeline_mod.Pipeline,
                 data_store: intake.DataStore,
                 releases: releases_mod.Releases, member_id: str) -> None:
        self._nodes = nodes
        self._conf = conf
        self._pipeline = pipeline
        self._data_store = data_store
        self._releases = releases
        self._member_id = member_id
        self._not_found = not_found.load(conf, nodes.ironic)
        self._tx = nodes.tx
        self._publish = nodes.publish

    def register(self, app: flask.Flask) -> None:
        rules: list[tuple[str, Callable[..., flask.Response], list[str]]]
        rules = [('/v1/introspection/<node_id>', self.start, ['POST']),
                 ('/v1/introspection/<node_id>', self.status, ['GET']),
                 ('/v1/introspection/<node_id>/abort', self.abort,
                  ['POST']),
                 ('/v1/continue', self.continue_, ['POST'])]
        for path, view, methods in rules:
            app.add_url_rule(path, view.__name__ + path, view,
                             methods=methods, strict_slashes=False)

    def start(self, node_id: str) -> flask.Response:
        manage_boot = _manage_boot(self._conf)
        node = self._nodes.ironic_node(node_id)
        checks.check_startable(
            self._nodes.ironic, node, manage_boot,
            self._conf.processing.permit_active_introspection)
        bmcs = bmc.bmc_addresses(node,
                                self._conf.ipmi_address_fields)
        request_id = self._tx(intake.start, node.id, manage_boot, bmcs,
                              self._member_id, self._data_store,
                              node.to_dict(computed=False))
        self._publish(request_id, node.id, st.START)
        metrics.series(metrics.STARTED, 'start').inc()
        return accepted()

    def status(self, node_id: str) -> flask.Response:
        uuid = self._nodes.uuid(node_id)
        return flask.jsonify(status_of(self._tx(intake.node, uuid)))

    def abort(self, node_id: str) -> flask.Response:
        uuid = self._nodes.uuid(node_id)
        request_id = self._tx(intake.event, uuid, st.ABORT, None,
                              self._member_id)
        self._publish(request_id, uuid, st.ABORT)
        return accepted()

    def continue_(self) -> flask.Response:
        data = ramdisk_payload()
        logs = data.pop('logs', None)
        flask.g.ramdisk_node = None
        always = self._conf.processing.always_store_ramdisk_logs
        try:
            response = self._continue(data, None if always else logs)
        except errors.ApiError:
            ramdisk_logs.save(self._conf, logs, data,
                              flask.g.ramdisk_node)
            raise
        if always:
            ramdisk_logs.save(self._conf, logs, data,
                              flask.g.ramdisk_node)
        return response

    def _continue(self, data: dict[str, Any],
                  logs: str | None) -> flask.Response:
        """Record the post; ``logs`` (or None) go to the worker, which
        saves them if processing fails. The lookup and the request are
        one transaction. The data as posted is kept (copied before the
        hooks change it) only for a store that keeps it."""
        keeps = getattr(self._data_store, 'enabled', True)
        raw = body.copy_of(data) if keeps else None
        failures = self._pipeline.before_processing(data)
        event, record = self._recorder(data, raw, logs, failures)
        uuid, request_id = self._lookup(data, record)
        if uuid is None:
            return self._not_in_cache(data, raw, failures)
        self._publish(request_id, uuid, event)
        if failures:
            raise errors.ApiError(base.pre_hooks_failed(failures), 400)
        return flask.jsonify({'uuid': uuid})

    def _recorder(self, data: dict[str, Any], raw: dict[str, Any] | None,
                  logs: str | None,
                  failures: list[str]
                  ) -> tuple[str, Callable[[sa.Connection, str], str | None]]:
        """``(event, record(conn, uuid))``: an ``error`` request when
        pre-processing hooks failed, else the ``process`` request."""
        if failures:
            return st.FAIL, functools.partial(
                _record_error, base.pre_hooks_failed(failures))
        early = self._releases.allows(intake.PARKING_RELEASE)
        # NOTE: workers of 0.1.0 would keep the logs in the data.
        carried = (ramdisk_logs.carry(self._conf, data, logs) if early
                   else data)
        return st.PROCESS, functools.partial(
            intake.process, data=carried, raw=raw,
            data_store=self._data_store, early=early, actor=self._member_id)

    def _lookup(self, data: dict[str, Any],
                record: Callable[[sa.Connection, str], str | None]
                ) -> tuple[str | None, str | None]:
        """``(UUID, request id)``: the node under introspection the data
        is for, and what ``record(conn, uuid)`` recorded for it, in
        the lookup's transaction; ``(None, None)`` when none matches."""
        macs = ramdisk_data.lookup_macs(data)
        bmcs = ramdisk_data.lookup_bmcs(data)
        try:
            return self._tx(intake.find_and_record, macs, bmcs,
                            _name_logs_node, record)
        except lookup.Ambiguous as exc:
            raise errors.ApiError(str(exc), 400) from None

    def _not_in_cache(self, data: dict[str, Any],
                      raw: dict[str, Any] | None,
                      failures: list[str]) -> flask.Response:
        """Data of no node under introspection, as upstream: an active
        node's (``permit_active_introspection``), else the node-not-found
        hook's, which runs even when a pre-processing hook failed; no
        hook: 400 with "Look up error" among the failures."""
        uuid = active.find(self._nodes.ironic, self._conf, data)
        if uuid is not None:
            return self._record(data, raw, failures, uuid, discovered=False)
        if self._not_found is None:
            failures.append(LOOKUP_ERROR % {
                'bmc_address': ramdisk_data.lookup_bmcs(data),
                'mac': ramdisk_data.lookup_macs(data)})
            raise errors.ApiError(base.pre_hooks_failed(failures))
        try:
            uuid = self._not_found(data)
        except retry.BackendUnavailable:
            raise
        except Exception as exc:
            LOG.warning('Node not found hook failed: %s', exc)
            failures.append('Node not found hook failed: %s' % exc)
            uuid = None
        else:
            if not uuid:
                failures.append('Node not found hook returned nothing')
        if uuid is None:
            raise errors.ApiError(base.pre_hooks_failed(failures))
        return self._record(data, raw, failures, uuid, discovered=True)

    def _record(self, data: dict[str, Any], raw: dict[str, Any] | None,
                failures: list[str], uuid: str,
                discovered: bool) -> flask.Response:
        """Record the node (``enrolling``) with its process request, or,
        when pre-processing hooks failed, with an ``error`` request
        carrying the failures (upstream's), and answer 400 then."""
        flask.g.ramdisk_node = uuid
        error = base.pre_hooks_failed(failures) if failures else None
        try:
            request_id = self._tx(
                intake.enroll, uuid, data, raw, self._data_store,
                ramdisk_data.lookup_macs(data), ramdisk_data.lookup_bmcs(data),
                self._member_id, error, discovered)
        except Exception:
            if discovered:
                self._forget(uuid)
            raise
        self._publish(request_id, uuid, st.FAIL if error else st.PROCESS)
        metrics.series(metrics.STARTED, 'discovery').inc()
        if error:
            raise errors.ApiError(error)
        return flask.jsonify({'uuid': uuid})

    def _forget(self, uuid: str) -> None:
        """Delete a node just enrolled whose row could not be written, so
        that the ramdisk's retry can enroll it again."""
        try:
            self._nodes.ironic.delete_node(uuid)
        except Exception:
            LOG.exception('Cannot delete node %s, enrolled by discovery '
                          'but not recorded', uuid)


def status_of(node: models.Node) -> dict[str, Any]:
    return {'uuid': node.uuid, 'state': node.state,
            'finished': node.finished_at is not None,
            'started_at': timeutils.isoformat(node.started_at),
            'finished_at': timeutils.isoformat(node.finished_at),
            'error': node.error,
            'links': versions.link('/v1/introspection/' + node.uuid)}


def accepted() -> flask.Response:
    return flask.Response('{}\n', status=202, mimetype='application/json')


def _manage_boot(conf: cfg.ConfigOpts) -> bool:
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


def _name_logs_node(uuid: str) -> None:
    """The node ramdisk data is for: its logs' file is named after it."""
    flask.g.ramdisk_node = uuid


def _record_error(message: str, conn: sa.Connection, uuid: str) -> str:
    """An ``error`` request: the pre-processing hooks failed."""
    return intake.event(conn, uuid, st.FAIL, {'error': message})


def json_object() -> dict[str, Any]:
    raw = flask.request.get_data(cache=False)
    try:
        data = body.decode(raw)
    except body.Invalid as exc:
        raise errors.ApiError('Invalid JSON body: %s' % exc) from None
    if not isinstance(data, dict):
        raise errors.ApiError('Invalid data: expected a JSON object, got '
                              '%s' % type(data).__name__)
    return data


def ramdisk_payload() -> dict[str, Any]:
    """The body as a ramdisk payload whose known fields have their types."""
    data = json_object()
    try:
        ramdisk.check(data)
    except body.Invalid as exc:
        raise errors.ApiError('Invalid ramdisk data: %s' % exc) from None
    return data
