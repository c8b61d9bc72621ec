"""``/v1/rules``: introspection rules, read and written in SQL directly."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import flask

from inspector_ha.api import body
from inspector_ha.api import errors
from inspector_ha.db import rules as rules_db
from inspector_ha.rules import engine
from inspector_ha.rules import plugins
from inspector_ha.rules import schema

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment
    from werkzeug.datastructures import Headers

    from inspector_ha.db import api as db_api

_T = TypeVar('_T')

#: ``POST /v1/rules`` answers 201 from this microversion on, 200 before.
CREATED_SINCE = (1, 6)
SHORT = ('uuid', 'description', 'scope')


class Rules:
    """:param store: the SQL store the rules are kept in."""

    def __init__(self, store: db_api.Store) -> None:
        self._store = store
        self._plugins = plugins.Plugins()

    def register(self, app: flask.Flask) -> None:
        app.add_url_rule('/v1/rules', 'api_rules', self.rules,
                         methods=['GET', 'POST', 'DELETE'],
                         strict_slashes=False)
        app.add_url_rule('/v1/rules/<uuid>', 'api_rule', self.rule,
                         methods=['GET', 'DELETE'], strict_slashes=False)

    def rules(self) -> flask.Response:
        method = flask.request.method
        if method == 'GET':
            return flask.jsonify(rules=[
                _short(r) for r in self._tx(rules_db.list_all)])
        if method == 'DELETE':
            self._tx(rules_db.delete_all)
            return _no_content()
        return self.create()

    def create(self) -> flask.Response:
        try:
            rule = engine.validate(_json_body(), self._plugins)
        except plugins.InvalidRule as exc:
            raise errors.ApiError(str(exc), 400) from None
        response = flask.jsonify(_full(self._tx(rules_db.create, rule)))
        response.status_code = (
            201 if flask.g.api_version >= CREATED_SINCE else 200)
        return response

    def rule(self, uuid: str) -> flask.Response:
        uuid = schema.canonical_uuid(uuid)
        if flask.request.method == 'GET':
            return flask.jsonify(_full(self._tx(rules_db.get, uuid)))
        self._tx(rules_db.delete, uuid)
        return _no_content()

    def _tx(self, func: Callable[..., _T], *args: Any) -> _T:
        return self._store.transaction(func, *args)


def _links(uuid: str) -> list[dict[str, str]]:
    # NOTE: upstream's rule links are relative (flask.url_for), unlike
    # the absolute links of the introspection status.
    return [{'href': flask.url_for('api_rule', uuid=uuid), 'rel': 'self'}]


def _full(rule: dict[str, Any]) -> dict[str, Any]:
    return dict(rule, links=_links(rule['uuid']))


def _short(rule: dict[str, Any]) -> dict[str, Any]:
    return dict({k: rule[k] for k in SHORT}, links=_links(rule['uuid']))


class _NoContent(flask.Response):
    """204 with an empty ``text/plain`` body and, as upstream sends it,
    ``Content-Length: 0`` (werkzeug drops the header of a 204; without
    it some WSGI servers answer with a chunked body)."""

    def get_wsgi_headers(self, environ: WSGIEnvironment) -> Headers:
        headers = super().get_wsgi_headers(environ)
        headers['Content-Length'] = '0'
        return headers


def _no_content() -> flask.Response:
    return _NoContent(b'', status=204, mimetype='text/plain')


def _json_body() -> Any:
    try:
        return body.decode(flask.request.get_data(cache=False))
    except body.Invalid as exc:
        raise errors.ApiError('Invalid JSON body: %s' % exc) from None
