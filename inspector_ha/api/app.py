"""The Flask application factory; one app per service object."""

import flask
from werkzeug.middleware import proxy_fix

from inspector_ha.api import auth
from inspector_ha.api import errors
from inspector_ha.api import introspection
from inspector_ha.api import openapi
from inspector_ha.api import rules
from inspector_ha.api import v1
from inspector_ha.api import versions


def create_app(service):
    app = flask.Flask('inspector_ha')
    app.config['MAX_CONTENT_LENGTH'] = service.conf.max_request_bytes
    app.url_map.strict_slashes = False
    errors.register(app)
    app.before_request(_check_version)
    auth.register(app, service.conf)
    app.after_request(versions.add_headers)
    app.add_url_rule('/', 'root', versions.root, methods=['GET'])
    app.add_url_rule('/<version>', 'version_root', versions.version_root,
                     methods=['GET'])
    v1.V1(service).register(app)
    introspection.Introspection(service).register(app)
    rules.Rules(service).register(app)
    openapi.register(app)
    app.wsgi_app = proxy_fix.ProxyFix(app.wsgi_app, x_for=1, x_proto=1,
                                      x_host=1, x_port=1, x_prefix=1)
    return app


def _check_version():
    flask.g.api_version = versions.requested()
