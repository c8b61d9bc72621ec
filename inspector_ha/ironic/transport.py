"""Ironic's REST calls over kept-alive ``http.client`` connections, for
the calls of every introspection.

requests (under keystoneauth) costs about 0.9 ms of CPU per call on the
2-core benchmark machine, a bare ``http.client`` call 0.3 ms
(``benchmarks/results/2026-11-25-own-cpu.md``): seven calls per
introspection. keystoneauth still owns what it is for: the endpoint (the
catalog or ``endpoint_override``, after version discovery), the auth
headers (a token it renews; on a 401 it is invalidated and the call made
once more, as keystoneauth's session does) and the microversion. Only a
plain ``http://`` endpoint reached without a proxy takes this path; TLS
and proxies stay with requests (:func:`usable`).
"""

from __future__ import annotations

import http.client
import json
import socket
import queue
import urllib.parse
from typing import Any

from keystoneauth1 import exceptions as ks_exc
import requests
from openstack import exceptions as sdk_exc

from inspector_ha.coordination import releases
from inspector_ha.ironic import answers

#: Errors of a connection kept alive that the server closed meanwhile:
#: the call is made once more on a new connection.
DROPPED = (http.client.RemoteDisconnected, ConnectionResetError,
           BrokenPipeError)
USER_AGENT = 'inspector-ha/%s http.client' % releases.CURRENT
#: Idle connections kept for the next calls (as requests' pool keeps 10
#: per host): more calls at once open more, closed after their call.
KEPT_IDLE = 10


def usable(adapter: Any) -> bool:
    """Whether the baremetal ``adapter``'s calls can take this path: a
    plain HTTP endpoint, and requests not told to read the environment
    (a proxy variable is set)."""
    return (not adapter.session.session.trust_env and
            urllib.parse.urlsplit(adapter.get_endpoint() or '').scheme ==
            'http')


class Transport:
    """Calls on the baremetal endpoint of keystoneauth's ``adapter``
    (``path`` relative to it, as the adapter's own), answered as JSON or
    raised as openstacksdk's exceptions (as its methods would)."""

    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter
        endpoint = urllib.parse.urlsplit(adapter.get_endpoint())
        self._address = (endpoint.hostname or '', endpoint.port or 80)
        self._base = endpoint.path.rstrip('/')
        self._url = endpoint.geturl().rstrip('/')
        self._timeout = adapter.session.timeout
        microversion = adapter.default_microversion
        self._headers = {'Accept': 'application/json',
                         'User-Agent': USER_AGENT}
        if microversion:
            self._headers.update({
                'OpenStack-API-Version': 'baremetal %s' % microversion,
                'X-OpenStack-Ironic-API-Version': microversion})
        self._idle: queue.LifoQueue[http.client.HTTPConnection] = (
            queue.LifoQueue())
        self._closed = False

    def call(self, method: str, path: str, params: dict[str, str] | None,
             body: Any = None) -> Any:
        """``method`` on ``path`` with query ``params`` and JSON
        ``body``: the answer's JSON (None if empty)."""
        path += _query(params)
        payload = None if body is None else json.dumps(body).encode()
        headers = dict(self._headers)
        if payload is not None:
            headers['Content-Type'] = 'application/json'
        status, reason, answer_headers, data = self._authenticated(
            method, path, payload, headers)
        if status >= 300:
            _raise(method, self._url + path, status, reason, answer_headers,
                   data)
        return json.loads(data) if data else None

    def close(self) -> None:
        """Closes the connections kept for the next calls; one in use
        now is closed when its call ends, and so is every later call's."""
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    def _authenticated(self, method: str, path: str, payload: bytes | None,
                       headers: dict[str, str]) -> tuple[int, str, Any,
                                                         bytes]:
        """The exchange with the session's auth headers; after a 401,
        once more with new ones if the plugin could drop its token (as
        keystoneauth's session does)."""
        session = self._adapter.session
        auth = self._adapter.auth or session.auth
        answer = self._send(method, path, payload,
                            dict(headers, **_auth_headers(session, auth)))
        if answer[0] == 401 and auth is not None and session.invalidate(auth):
            answer = self._send(method, path, payload,
                                dict(headers, **_auth_headers(session, auth)))
        return answer

    def _send(self, method: str, path: str, payload: bytes | None,
              headers: dict[str, str]) -> tuple[int, str, Any, bytes]:
        """One exchange on an idle connection (once more on a new one if
        Ironic closed it meanwhile), kept for the next call."""
        try:
            connection = self._idle.get_nowait()
        except queue.Empty:
            connection = None
        answer = None
        if connection is not None:
            try:
                answer = self._exchange(connection, method, path, payload,
                                        headers)
            except DROPPED:
                connection.close()
        if answer is None:
            connection = _Connection(*self._address, timeout=self._timeout)
            answer = self._exchange(connection, method, path, payload,
                                    headers, fresh=True)
        if self._closed or self._idle.qsize() >= KEPT_IDLE:
            connection.close()
            return answer
        self._idle.put(connection)
        if self._closed:  # close() ran meanwhile and may have missed it
            self.close()
        return answer

    def _exchange(self, connection: http.client.HTTPConnection,
                  method: str, path: str, payload: bytes | None,
                  headers: dict[str, str], fresh: bool = False
                  ) -> tuple[int, str, Any, bytes]:
        try:
            connection.request(method, self._base + path, payload, headers)
            response = connection.getresponse()
            data = response.read()
        except DROPPED:
            if fresh:
                connection.close()
                raise _failure(self._url, 'closed by Ironic') from None
            raise
        except socket.timeout:
            connection.close()
            raise ks_exc.ConnectTimeout('Ironic at %s did not answer in '
                                        '%s s' % (self._url, self._timeout))
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise _failure(self._url, exc) from None
        if response.will_close:
            connection.close()
        return response.status, response.reason, response.headers, data


class _Connection(http.client.HTTPConnection):
    """A connection whose answers read their headers without the
    ``email`` package (:mod:`inspector_ha.ironic.answers`)."""

    response_class = answers.Answer


def _query(params: dict[str, Any] | None) -> str:
    """``params`` as requests encodes them: None values left out, a list
    as the parameter repeated."""
    given = {k: v for k, v in (params or {}).items() if v is not None}
    return '?' + urllib.parse.urlencode(given, doseq=True) if given else ''


def _auth_headers(session: Any, auth: Any) -> dict[str, str]:
    """The auth plugin's headers (none without a plugin)."""
    if auth is None:
        return {}
    headers = session.get_auth_headers(auth)
    if headers is None:
        raise ks_exc.AuthorizationFailure('No token was obtained for '
                                          'Ironic')
    return headers


def _failure(url: str, why: Any) -> ks_exc.ConnectFailure:
    return ks_exc.ConnectFailure('Unable to establish connection to %s: '
                                 '%s' % (url, why))


def _raise(method: str, url: str, status: int, reason: str, headers: Any,
           data: bytes) -> None:
    """openstacksdk's exception for an error answer, with its message
    (it reads a requests response; one is made for it). A redirect is
    not followed: it is an error naming where it points."""
    if status < 400:
        raise sdk_exc.HttpException(
            'Ironic at %s answered %d, a redirect to %s: set [ironic] '
            'endpoint_override to the URL it names' % (
                url, status, headers.get('Location')))
    response = requests.Response()
    response.status_code = status
    response.reason = reason
    response.headers = requests.structures.CaseInsensitiveDict(
        headers.items())
    response._content = data
    response.url = url
    response.request = requests.Request(method, url).prepare()
    sdk_exc.raise_from_response(response)
