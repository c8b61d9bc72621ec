"""The v1 introspection endpoints beyond start, status and abort: the
status list, introspection data, and reapplying data.

Deviations from upstream, on purpose:

* Reapply of a node whose state has no ``reapply`` transition (starting,
  waiting, processing, enrolling, aborting) is refused at once with 400;
  upstream answers 409 "Node locked" when the node lock is held and
  otherwise 202 followed by a background failure. Reapply never answers
  409 here: the worker serializes it with other requests of the node.
* A supplied reapply body has its ``logs`` removed before it is stored,
  as ``/v1/continue`` does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import flask
from oslo_utils import uuidutils

from inspector_ha.api import errors
from inspector_ha.api import intake
from inspector_ha.api import v1
from inspector_ha.db import listing
from inspector_ha.fsm import states as st

if TYPE_CHECKING:
    from oslo_config import cfg
    from werkzeug.datastructures import MultiDict

    from inspector_ha.api import nodes as nodes_mod

REAPPLY_NEEDS_STORE = (
    'Inspector is not configured to store introspection data. Set the '
    '[processing]store_data configuration option to change this.')


class Introspection:
    """:param nodes: the shared :class:`~inspector_ha.api.nodes.Nodes`.
    :param data_store: where introspection data is kept.
    :param conf: the configuration (``api_max_limit``, the longest page).
    """

    def __init__(self, nodes: nodes_mod.Nodes,
                 data_store: intake.DataStore,
                 conf: cfg.ConfigOpts) -> None:
        self._nodes = nodes
        self._data_store = data_store
        self._conf = conf
        self._tx = nodes.tx

    def register(self, app: flask.Flask) -> None:
        data = '/v1/introspection/<node_id>/data'
        rules: list[tuple[str, Callable[..., flask.Response], list[str]]]
        rules = [('/v1/introspection', self.statuses, ['GET']),
                 (data, self.processed_data, ['GET']),
                 (data + '/unprocessed', self.unprocessed_data, ['GET']),
                 (data + '/unprocessed', self.reapply, ['POST'])]
        for path, view, methods in rules:
            app.add_url_rule(path, view.__name__ + path, view,
                             methods=methods, strict_slashes=False)

    def statuses(self) -> flask.Response:
        args = flask.request.args
        rows = self._tx(listing.page, _limit(args, self._conf.api_max_limit),
                        _marker(args), _states(args))
        return flask.jsonify(
            {'introspection': [v1.status_of(row) for row in rows]})

    def processed_data(self, node_id: str) -> flask.Response:
        return self._data(node_id, True)

    def unprocessed_data(self, node_id: str) -> flask.Response:
        return self._data(node_id, False)

    def _data(self, node_id: str, processed: bool) -> flask.Response:
        data = self._tx(self._data_store.get, self._nodes.uuid(node_id),
                        processed)
        return flask.Response(json.dumps(data),
                              mimetype='application/json')

    def reapply(self, node_id: str) -> flask.Response:
        data = _optional_object()
        if data is None and not self._data_store.enabled:
            raise errors.ApiError(REAPPLY_NEEDS_STORE)
        uuid = self._nodes.uuid(node_id)
        request_id = self._tx(intake.reapply, uuid, data,
                              self._data_store)
        self._nodes.publish(request_id, uuid, st.REAPPLY)
        return v1.accepted()


def _limit(args: MultiDict[str, str], maximum: int) -> int:
    """``limit``: 0 or absent means the maximum, ``api_max_limit``."""
    try:
        limit = int(args.get('limit', 0)) or maximum
    except ValueError as exc:
        raise errors.ApiError('Bad request: %s' % exc) from None
    if limit < 0:
        raise errors.ApiError('Bad request: Limit cannot be negative')
    if limit > maximum:
        raise errors.ApiError('Bad request: Limit over %d' % maximum)
    return limit


def _marker(args: MultiDict[str, str]) -> str | None:
    marker = args.get('marker')
    if marker is not None and not uuidutils.is_uuid_like(marker):
        raise errors.ApiError('Bad request: Marker not UUID-like')
    return marker


def _states(args: MultiDict[str, str]) -> list[str] | None:
    value = args.get('state')
    if value is None:
        return None
    wanted = value.split(',')
    invalid = [state for state in wanted if state not in st.STATES]
    if invalid:
        raise errors.ApiError('Bad request: State(s) "%s" are not valid'
                              % ', '.join(invalid))
    return wanted


def _optional_object() -> dict[str, Any] | None:
    """The body as a JSON object, or None for no body or ``{}``.

    Upstream treats an empty object like no body: the stored data is used.
    """
    if not flask.request.get_data(cache=True).strip():
        return None
    data = v1.ramdisk_payload()
    data.pop('logs', None)
    return data or None
