"""API authentication by ``[DEFAULT] auth_strategy``.

* ``noauth``: no checks.
* ``http_basic``: a bcrypt htpasswd file, read again on every request;
  401 on a missing or bad credential, no policy.
* ``keystone``: keystonemiddleware ``auth_token`` with
  ``delay_auth_decision`` wraps the WSGI application and only sets
  headers (it strips any the client sent); the checks here then answer
  401 unless ``X-Identity-Status`` is ``Confirmed`` and 403 unless the
  route's oslo.policy rule (:mod:`inspector_ha.api.policy`) allows it.

The checks run in a ``before_request`` hook, so their 401/403 answers
are Flask responses in the JSON error format with the version headers.
Public routes (``GET /``, ``GET /<version>``, ``GET /v1/openapi.json``,
``POST /v1/continue``) ask for no credential under any strategy;
unrouted requests are left to Flask's 404/405.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
from typing import TYPE_CHECKING

import bcrypt
import flask

from inspector_ha.api import errors
from inspector_ha.api import policy

if TYPE_CHECKING:
    from oslo_config import cfg
    from werkzeug.datastructures import Headers

LOG = logging.getLogger(__name__)
#: The realm upstream (ironic-lib's basic auth middleware) announces.
REALM = 'Baremetal API'
BCRYPT_PREFIXES = ('$2y$', '$2a$', '$2b$')
BAD_CREDENTIAL = 'Incorrect username or password'


class UserFileError(Exception):
    """The htpasswd file is unreadable or holds a non-bcrypt entry."""


class Unauthorized(Exception):
    """A missing or bad credential."""


class NotConfigured(Exception):
    """``auth_strategy = keystone`` without what keystonemiddleware needs
    to validate a token (it would answer every request 500)."""


#: keystonemiddleware's option group.
AUTHTOKEN = 'keystone_authtoken'
#: What an operator sets for the usual plugin.
AUTHTOKEN_HINT = ('set [keystone_authtoken] auth_type = password with '
                  'auth_url, username, password, project_name, '
                  'user_domain_name, project_domain_name and '
                  'www_authenticate_uri, or [DEFAULT] auth_strategy = '
                  'http_basic or noauth')


def check_keystone(conf: cfg.ConfigOpts) -> None:
    """Raise :class:`NotConfigured` naming what ``[keystone_authtoken]``
    lacks for keystonemiddleware to validate tokens (its auth plugin and
    that plugin's required options), through keystoneauth's loader."""
    from keystoneauth1 import exceptions as ks_exc
    from keystoneauth1 import loading
    from keystonemiddleware import auth_token
    for group, options in auth_token.list_opts():
        conf.register_opts(options, group=group)
    loading.register_auth_conf_options(conf, AUTHTOKEN)
    try:
        plugin = loading.load_auth_from_conf_options(conf, AUTHTOKEN)
    except (ks_exc.MissingRequiredOptions, ks_exc.NoMatchingPlugin) as exc:
        raise NotConfigured('auth_strategy is keystone and [%s] is '
                            'incomplete (%s): %s' % (
                                AUTHTOKEN, exc, AUTHTOKEN_HINT)) from None
    if plugin is None:
        raise NotConfigured('auth_strategy is keystone and [%s] names no '
                            'auth plugin: %s' % (AUTHTOKEN, AUTHTOKEN_HINT))


def register(app: flask.Flask, conf: cfg.ConfigOpts) -> None:
    """Install the checks of ``conf.auth_strategy`` on ``app``."""
    if conf.auth_strategy == 'noauth' and not is_loopback(
            conf.listen_address):
        LOG.warning('auth_strategy is noauth and the API listens on %s: '
                    'anyone who reaches it can start, abort and read '
                    'introspections. Set [DEFAULT] auth_strategy to '
                    'keystone or http_basic, or listen on 127.0.0.1.',
                    conf.listen_address)
    if conf.auth_strategy == 'http_basic':
        app.before_request(BasicAuth(conf.http_basic_auth_user_file))
    elif conf.auth_strategy == 'keystone':
        # NOTE: imported here: keystonemiddleware costs every process that
        # does not use it about 4 MB of RSS.
        from keystonemiddleware import auth_token
        check_keystone(conf)
        app.before_request(KeystoneAuth(conf))
        # NOTE: Flask's documented way to add a WSGI middleware; mypy
        # sees a method assigned.
        app.wsgi_app = auth_token.AuthProtocol(  # type: ignore[method-assign]
            app.wsgi_app, {'oslo_config_config': conf,
                           'delay_auth_decision': True})


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or a host name) is loopback."""
    if address == 'localhost':
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _rule_name() -> str | None:
    """The policy rule of the current request; None when not routed."""
    url_rule = flask.request.url_rule
    if url_rule is None:
        return None
    return policy.rule_for(flask.request.method, url_rule.rule)


class BasicAuth:
    def __init__(self, user_file: str) -> None:
        self._file = user_file
        validate(user_file)  # NOTE: fail at start-up, as upstream does.

    def __call__(self) -> flask.Response | None:
        name = _rule_name()
        if name is None or name in policy.PUBLIC_RULES:
            return None
        try:
            user = authenticate(self._file, flask.request.headers)
        except Unauthorized as exc:
            resp = errors.response(str(exc), 401)
            resp.headers['WWW-Authenticate'] = 'Basic realm="%s"' % REALM
            return resp
        flask.g.user = user
        return None


def authenticate(user_file: str, headers: Headers) -> str:
    """The user name of a valid ``Authorization: Basic`` header.

    :raises Unauthorized: on a missing, malformed or wrong credential.
    :raises UserFileError: when ``user_file`` cannot be used.
    """
    user, password = parse_header(headers.get('Authorization'))
    crypted = read_entries(user_file).get(user)
    if crypted is None:
        LOG.info('HTTP basic authentication: unknown user %s', user)
        raise Unauthorized(BAD_CREDENTIAL)
    check_entry(user, crypted)
    if not _password_matches(password, crypted):
        LOG.info('HTTP basic authentication: wrong password for %s', user)
        raise Unauthorized(BAD_CREDENTIAL)
    return user


def _password_matches(password: str, crypted: str) -> bool:
    try:
        return bcrypt.checkpw(password.encode(), crypted.encode())
    except ValueError as exc:  # longer than 72 bytes, or a broken hash
        LOG.info('HTTP basic authentication: %s', exc)
        return False


def parse_header(value: str | None) -> tuple[str, str]:
    """``(user, password)`` of an ``Authorization: Basic`` header value."""
    if not value:
        raise Unauthorized('Authorization required')
    kind, _sep, token = value.strip().partition(' ')
    if kind.lower() != 'basic':
        raise Unauthorized('Unsupported authorization type "%s"' % kind)
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise Unauthorized('Could not decode authorization token') from None
    user, sep, password = decoded.partition(':')
    if not sep or not user:
        raise Unauthorized('Invalid authorization token')
    return user, password


def read_entries(user_file: str) -> dict[str, str]:
    """``{user: hash}`` of an htpasswd file; the first line of a user wins.

    :raises UserFileError: when the file cannot be read.
    """
    try:
        with open(user_file, encoding='utf-8') as stream:
            lines = stream.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserFileError('Problem reading auth user file %s: %s'
                            % (user_file, exc)) from None
    entries: dict[str, str] = {}
    for line in lines:
        user, sep, crypted = line.strip().partition(':')
        if sep and not user.startswith('#'):
            entries.setdefault(user, crypted)
    return entries


def check_entry(user: str, crypted: str) -> None:
    """:raises UserFileError: unless ``crypted`` is a bcrypt hash."""
    if not crypted.startswith(BCRYPT_PREFIXES):
        raise UserFileError('Only bcrypt digested passwords are supported '
                            'for %s' % user)


def validate(user_file: str) -> None:
    """:raises UserFileError: unreadable file or a non-bcrypt entry."""
    for user, crypted in read_entries(user_file).items():
        check_entry(user, crypted)


class KeystoneAuth:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._enforcer = policy.enforcer(conf)

    def __call__(self) -> flask.Response | None:
        name = _rule_name()
        if name is None:
            return None
        public = name in policy.PUBLIC_RULES
        environ = flask.request.environ
        if not public and environ.get('HTTP_X_IDENTITY_STATUS') != \
                'Confirmed':
            return errors.response('Authentication required', 401)
        creds = policy.credentials(environ, public)
        if not policy.authorized(self._enforcer, name, creds):
            return errors.response('Access denied by policy', 403)
        return None
