"""The Flask application factory; one app per service object.

:func:`create_app` and :func:`mount` are where the API takes the service
apart: each view class gets the pieces it uses."""

from __future__ import annotations

import time
from typing import Any

import flask
from oslo_middleware import cors
from werkzeug.middleware import proxy_fix

from inspector_ha.api import auth
from inspector_ha.api import errors
from inspector_ha.api import health
from inspector_ha.api import introspection
from inspector_ha.api import nodes
from inspector_ha.api import openapi
from inspector_ha.api import request_ids
from inspector_ha.api import rules
from inspector_ha.api import v1
from inspector_ha.api import versions
from inspector_ha.common import logctx
from inspector_ha.common import metrics


# NOTE: ``service`` is an inspector_ha.service.Service, typed Any: naming
# it would make the packages import each other (tests/unit/test_layering).
def create_app(service: Any) -> flask.Flask:
    app = flask.Flask('inspector_ha')
    app.config['MAX_CONTENT_LENGTH'] = service.conf.max_request_bytes
    app.url_map.strict_slashes = False
    errors.register(app)
    app.before_request(_bind_context)
    app.after_request(_count)
    app.teardown_request(lambda _exc: logctx.clear())
    app.before_request(_check_version)
    auth.register(app, service.conf)
    app.after_request(versions.add_headers)
    app.add_url_rule('/', 'root', versions.root, methods=['GET'])
    app.add_url_rule('/<version>', 'version_root', versions.version_root,
                     methods=['GET'])
    for views in _views(service):
        views.register(app)
    openapi.register(app)
    # NOTE: Flask's documented way to add WSGI middleware; mypy sees
    # methods assigned.
    app.wsgi_app = proxy_fix.ProxyFix(app.wsgi_app, x_for=1, x_proto=1,  # type: ignore[method-assign]
                                      x_host=1, x_port=1, x_prefix=1)
    app.wsgi_app = metrics.wrap(app.wsgi_app, service.conf)  # type: ignore[method-assign,assignment]
    # NOTE: [cors] (oslo.middleware, upstream's defaults in conf/cors.py).
    # With no allowed_origin it would pass every request through, at
    # about 0.45 ms of CPU each (measured on a slow test machine): it is
    # left out then.
    if service.conf.cors.allowed_origin:
        app.wsgi_app = cors.CORS(app.wsgi_app, service.conf)  # type: ignore[method-assign]
    # NOTE: outermost, so every answer (401s too) has its request id.
    app.wsgi_app = request_ids.RequestIds(app.wsgi_app)  # type: ignore[method-assign]
    return app


def _views(service: Any
           ) -> list[v1.V1 | introspection.Introspection | rules.Rules]:
    conf = service.conf
    shared = nodes.Nodes(service.store, service.publisher, service.ironic)
    return [v1.V1(shared, conf, service.pipeline, service.data_store,
                  service.releases, service.member_id),
            introspection.Introspection(shared, service.data_store, conf),
            rules.Rules(service.store)]


def _bind_context() -> None:
    flask.g.began = time.monotonic()
    logctx.from_environ(flask.request.environ)


#: The methods a request is counted under by name; any other (the
#: server takes any upper-case token) is counted as ``other``, so that no
#: client can add series at will.
COUNTED_METHODS = frozenset(
    ('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'))


def _count(response: flask.Response) -> flask.Response:
    """Count the answer by route (the URL rule, not the URL) and
    method."""
    rule = flask.request.url_rule
    route = rule.rule if rule is not None else 'unrouted'
    method = flask.request.method
    if method not in COUNTED_METHODS:
        method = 'other'
    metrics.series(metrics.API_REQUESTS, route, method,
                   response.status_code).inc()
    began = flask.g.get('began')
    if began is not None:
        metrics.series(metrics.API_SECONDS, route, method).observe(
            time.monotonic() - began)
    return response


def mount(router: health.Router, service: Any,
          probes: health.Probes) -> health.Router:
    """Put the API and ``/healthcheck`` behind ``router``."""
    router.routes[health.PATH] = health.middleware(service.conf, probes)
    router.default = create_app(service)
    return router


def _check_version() -> None:
    flask.g.api_version = versions.requested()
