"""Microversions and the version documents (``GET /``, ``GET /v1``)."""

from __future__ import annotations

import functools

import flask
from werkzeug.sansio import utils as werkzeug_utils

from inspector_ha.api import errors
from inspector_ha.api.version_headers import HEADER, MAX_HEADER, MIN_HEADER

MINIMUM = (1, 0)
CURRENT = (1, 18)
RESOURCES = ('continue', 'introspection', 'rules')


def fmt(version: tuple[int, int]) -> str:
    return '%d.%d' % version


def requested() -> tuple[int, int]:
    """Parse the requested microversion; no header means the current one.

    :raises ApiError: 400 on a malformed value, 406 outside the range.
    """
    value = flask.request.headers.get(HEADER, '').strip()
    if not value or value.lower() == 'latest':
        return CURRENT
    try:
        major, minor = (int(part) for part in value.split('.'))
    except ValueError:
        raise errors.ApiError('Malformed API version %r, expected X.Y or '
                              'latest' % value, 400) from None
    if not MINIMUM <= (major, minor) <= CURRENT:
        raise errors.ApiError(
            'Unsupported API version %s, supported range is %s to %s' %
            (value, fmt(MINIMUM), fmt(CURRENT)), 406)
    return major, minor


def add_headers(response: flask.Response) -> flask.Response:
    response.headers[MIN_HEADER] = fmt(MINIMUM)
    response.headers[MAX_HEADER] = fmt(CURRENT)
    return response


def root_url() -> str:
    """The request's ``url_root`` without its last slash, as werkzeug
    builds it, remembered for each scheme, host and root path (werkzeug
    builds it again for every request: about 7% of a status read's CPU)."""
    request = flask.request
    return _root_url(request.scheme, request.host, request.root_path)


#: Most roots remembered: the few names clients reach the API by (the
#: ``Host`` header is the client's, so the cache is bounded).
KNOWN_ROOTS = 64


@functools.lru_cache(maxsize=KNOWN_ROOTS)
def _root_url(scheme: str, host: str, root_path: str) -> str:
    return werkzeug_utils.get_current_url(scheme, host, root_path).rstrip(
        '/')


def link(path: str) -> list[dict[str, str]]:
    return [{'href': root_url() + path, 'rel': 'self'}]


def root() -> flask.Response:
    return flask.jsonify({'versions': [{
        'id': fmt(CURRENT), 'status': 'CURRENT', 'links': link('/v1')}]})


def version_root(version: str) -> flask.Response:
    if version != 'v1':
        raise errors.ApiError('Version %s not found.' % version, 404)
    return flask.jsonify({'resources': [
        {'name': name, 'links': link('/v1/' + name)}
        for name in RESOURCES]})
