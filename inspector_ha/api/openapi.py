"""``GET /v1/openapi.json``: the OpenAPI 3.0 document of this API.

The document is the data file ``openapi.yaml`` beside this module;
``tests/unit/test_openapi.py`` keeps it true to the routes and responses
of the application. It is public, under the ``introspection:version``
policy rule, like the version documents.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import flask
import yaml

from inspector_ha.api import versions

PATH = '/v1/openapi.json'
FILE = 'openapi.yaml'


@functools.cache
def document() -> dict[str, Any]:
    """The document as a dict, loaded once; callers must not change it."""
    text = resources.files(__package__).joinpath(FILE).read_text('utf-8')
    return yaml.safe_load(text)


def serve() -> flask.Response:
    """The document with ``servers`` set to the request's root URL, which
    honours X-Forwarded-* headers as the version documents' links do."""
    served = dict(document(), servers=[{'url': versions.root_url() or '/'}])
    return flask.jsonify(served)


def register(app: flask.Flask) -> None:
    app.add_url_rule(PATH, 'openapi', serve, methods=['GET'],
                     strict_slashes=False)
