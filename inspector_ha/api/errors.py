"""Errors as upstream formats them: ``{"error": {"message": ...}}``."""

import logging

import flask
from werkzeug import exceptions as http_exc

from inspector_ha.api import intake
from inspector_ha.common import retry
from inspector_ha.db import data_store
from inspector_ha.db import listing
from inspector_ha.db import nodes
from inspector_ha.db import rules as rules_db

LOG = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, message, code=400):
        super().__init__(message)
        self.code = code


def response(message, code):
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


def register(app):
    app.register_error_handler(ApiError, lambda e: response(str(e), e.code))
    for exc_class, code in CODES.items():
        app.register_error_handler(exc_class, _coded(code))
    app.register_error_handler(http_exc.RequestEntityTooLarge, _too_large)
    app.register_error_handler(http_exc.HTTPException, _http)
    app.register_error_handler(retry.BackendUnavailable, _unavailable)
    app.register_error_handler(nodes.StaleWrite, _conflict)
    app.register_error_handler(Exception, _unexpected)


def _http(exc):
    resp = response(exc.description or exc.name, exc.code)
    if exc.code == 405 and getattr(exc, 'valid_methods', None):
        resp.headers['Allow'] = ', '.join(exc.valid_methods)
    return resp


def _coded(code):
    return lambda exc: response(str(exc), code)


def _too_large(exc):
    limit = flask.current_app.config['MAX_CONTENT_LENGTH']
    return response('Request body too large: more than %d bytes '
                    '([DEFAULT] max_request_bytes)' % limit, 413)


def _unavailable(exc):
    return response('Service temporarily unavailable: %s' % exc, 503)


def _conflict(exc):
    return response('Node is being modified concurrently, please retry: '
                    '%s' % exc, 409)


def _unexpected(exc):
    LOG.exception('Unexpected error in the API')
    return response('Internal server error', 500)
