"""[cors]: oslo.middleware's CORS options, with upstream's defaults
(the API version headers allowed and exposed)."""

from oslo_middleware import cors

from inspector_ha.api import version_headers

GROUP = 'cors'
VERSION_HEADERS = [version_headers.HEADER, version_headers.MIN_HEADER,
                   version_headers.MAX_HEADER]

cors.set_defaults(
    allow_headers=['X-Auth-Token'] + VERSION_HEADERS,
    expose_headers=VERSION_HEADERS,
    allow_methods=['GET', 'POST', 'PUT', 'HEAD', 'PATCH', 'DELETE',
                   'OPTIONS'])

OPTS = cors.CORS_OPTS
