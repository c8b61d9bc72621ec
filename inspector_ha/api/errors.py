"""Errors as upstream formats them: ``{"error": {"message": ...}}``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import cast

import flask
from werkzeug import exceptions as http_exc

from inspector_ha.api import intake
from inspector_ha.common import retry
from inspector_ha.db import conflicts
from inspector_ha.db import data_store
from inspector_ha.db import listing
from inspector_ha.db import nodes
from inspector_ha.db import rules as rules_db

LOG = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code


def response(message: str, code: int) -> flask.Response:
    resp = flask.jsonify({'error': {'message': message}})
    resp.status_code = code
    return resp


# What each domain exception raised by a view (mostly from inside a
# store transaction) means over HTTP; its message is the error message.
CODES = {
    intake.NotInCache: 404,
    listing.MarkerNotFound: 404,
    data_store.NotStored: 404,
    rules_db.NotFound: 404,
    nodes.InvalidState: 400,
    intake.RetryLater: 409,
    rules_db.Duplicate: 409,
}


def register(app: flask.Flask) -> None:
    app.register_error_handler(ApiError, lambda e: response(str(e), e.code))
    for exc_class, code in CODES.items():
        app.register_error_handler(exc_class, _coded(code))
    app.register_error_handler(http_exc.RequestEntityTooLarge, _too_large)
    app.register_error_handler(http_exc.HTTPException, _http)
    app.register_error_handler(retry.BackendUnavailable, _unavailable)
    app.register_error_handler(conflicts.StaleWrite, _conflict)
    app.register_error_handler(Exception, _unexpected)


def _http(exc: http_exc.HTTPException) -> flask.Response:
    # NOTE: Flask hands an exception without a code back unhandled.
    resp = response(exc.description or exc.name, cast(int, exc.code))
    if exc.code == 405 and (methods := getattr(exc, 'valid_methods', None)):
        resp.headers['Allow'] = ', '.join(methods)
    return resp


def _coded(code: int) -> Callable[[Exception], flask.Response]:
    return lambda exc: response(str(exc), code)


#: The largest oversized body read and dropped before its 413 is sent. A
#: client (or HAProxy) still sending when the server answers and closes
#: gets a reset connection instead of the 413; a larger body gets the 413
#: with ``Connection: close`` and may see the reset.
DISCARD_LIMIT = 64 * 1024 * 1024
_CHUNK = 64 * 1024


def _too_large(exc: http_exc.RequestEntityTooLarge) -> flask.Response:
    limit = flask.current_app.config['MAX_CONTENT_LENGTH']
    resp = response('Request body too large: more than %d bytes '
                    '([DEFAULT] max_request_bytes)' % limit, 413)
    if not _discard_body(flask.request):
        resp.headers['Connection'] = 'close'
    return resp


def _discard_body(request: flask.Request) -> bool:
    """Read and drop the body of ``request``; False if it is too large
    (or of unknown length) to be worth reading."""
    remaining = request.content_length
    if remaining is None or remaining > DISCARD_LIMIT:
        return False
    stream = request.environ['wsgi.input']
    while remaining > 0:
        chunk = stream.read(min(_CHUNK, remaining))
        if not chunk:
            break
        remaining -= len(chunk)
    return True


def _unavailable(exc: retry.BackendUnavailable) -> flask.Response:
    return response('Service temporarily unavailable: %s' % exc, 503)


def _conflict(exc: conflicts.StaleWrite) -> flask.Response:
    return response('Node is being modified concurrently, please retry: '
                    '%s' % exc, 409)


def _unexpected(exc: Exception) -> flask.Response:
    LOG.exception('Unexpected error in the API')
    return response('Internal server error', 500)
