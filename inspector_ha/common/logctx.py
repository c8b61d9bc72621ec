"""Request ids in every log line about a request, across processes.

The API's request id (:mod:`inspector_ha.api.request_ids`, answered as
``X-OpenStack-Request-ID``) and the global request id a client or Ironic
sent are the thread's current oslo.context while the API handles the
call, so oslo.log prints them on each line. :func:`stamp` keeps them in
the JSON payload of the request row the call queues (the queued message
is unchanged); the worker that handles that row makes them its thread's
context again with :func:`bind`, so ``grep req-...`` finds an
introspection's lines in every process. A request queued without an API
call (by a periodic task) is logged under ``req-<its row id>``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from oslo_context import context as context_mod

if TYPE_CHECKING:
    # NOTE: db imports common, so common does not import db's models.
    class Row(Protocol):
        """A request row (:class:`inspector_ha.db.models.Request`)."""
        id: str
        node_uuid: str
        payload: str | None

#: The payload key holding the ids; removed again by :func:`unstamp`.
KEY = '_context'


def from_environ(environ: dict[str, Any]) -> context_mod.RequestContext:
    """Make the WSGI request's ids the current context."""
    return context_mod.RequestContext.from_environ(environ, overwrite=True)


def clear() -> None:
    """No current context: lines are logged without request ids."""
    # NOTE: oslo.context has no public way to unset the thread's context.
    context_mod._request_store.context = None


def current_ids() -> dict[str, str | None] | None:
    ctx = context_mod.get_current()
    if ctx is None or not ctx.request_id:
        return None
    return {'request_id': ctx.request_id,
            'global_request_id': ctx.global_request_id}


def stamp(payload: Any) -> Any:
    """``payload`` with the current ids added (when there are some)."""
    ids = current_ids()
    if ids is None or not isinstance(payload, (dict, type(None))):
        return payload
    return dict(payload or {}, **{KEY: ids})


def unstamp(payload: Any) -> tuple[Any, Any]:
    """``(payload without the ids, the ids or {})``."""
    if not isinstance(payload, dict) or KEY not in payload:
        return payload, {}
    payload = dict(payload)
    return payload, payload.pop(KEY) or {}


def bind(row: Row) -> context_mod.RequestContext:
    """Make the ids of request ``row`` (or its own id) the context."""
    try:
        ids = unstamp(json.loads(row.payload))[1] if row.payload else {}
    except ValueError:
        ids = {}  # NOTE: a poison payload: the worker dead-letters it.
    if not isinstance(ids, dict):
        ids = {}
    return context_mod.RequestContext(
        request_id=ids.get('request_id') or 'req-%s' % row.id,
        global_request_id=ids.get('global_request_id'),
        resource_uuid=row.node_uuid, overwrite=True)
