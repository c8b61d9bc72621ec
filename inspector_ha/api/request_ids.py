"""Each API request's id, as oslo.middleware's ``RequestId`` gives it,
without webob.

A request gets a new ``req-<uuid>`` in ``environ['openstack.request_id']``
and in its answer's ``x-openstack-request-id`` header (unless the answer
has one); a client's own well-formed ``X-OpenStack-Request-ID`` becomes
``environ['openstack.global_request_id']``, as Ironic's is; a HEAD
request's answer has no body, whatever the app wrote. oslo's
middleware builds a webob request and response around every call:
about 50 us of CPU a request on the 2-core benchmark machine, against a
few here (``tests/unit/test_request_ids.py`` checks the two agree). The
names and the id's format are oslo.middleware's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from oslo_context import context
from oslo_middleware import request_id as oslo_ids

#: The client's header, as WSGI names it.
ENV_GIVEN = 'HTTP_X_OPENSTACK_REQUEST_ID'
#: A global request id a client may give (oslo.middleware's format).
GLOBAL_ID = re.compile(oslo_ids.ID_FORMAT)

StartResponse = Callable[..., Any]
App = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class RequestIds:
    """WSGI middleware giving every request of ``app`` its ids."""

    def __init__(self, app: App) -> None:
        self._app = app

    def __call__(self, environ: dict[str, Any],
                 start_response: StartResponse) -> Iterable[bytes]:
        given = environ.get(ENV_GIVEN, '')
        if GLOBAL_ID.match(given):
            environ[oslo_ids.GLOBAL_REQ_ID] = given
        request_id = context.generate_request_id()
        environ[oslo_ids.ENV_REQUEST_ID] = request_id

        started = []

        def answer(status: str, headers: list[tuple[str, str]],
                   exc_info: Any = None) -> Any:
            started.append(status)
            header = oslo_ids.HTTP_RESP_HEADER_REQUEST_ID
            if not any(name.lower() == header for name, _value in headers):
                headers.append((header, request_id))
            return start_response(status, headers, exc_info)

        body = self._app(environ, answer)
        if environ.get('REQUEST_METHOD') != 'HEAD':
            return body
        return _emptied(body, started)


def _emptied(body: Iterable[bytes], started: list[str]) -> list[bytes]:
    """A HEAD answer's body: none. ``body`` is run only as far as it
    takes to start the answer (an app may start it when first iterated,
    as webob lets it), then closed."""
    try:
        if not started:
            for _chunk in body:
                if started:
                    break
    finally:
        close = getattr(body, 'close', None)
        if close is not None:
            close()
    return []
