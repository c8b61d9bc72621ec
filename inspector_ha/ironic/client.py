"""Ironic through openstacksdk, every call retried per ``[ironic]``.

Only the calls inspector-ha needs, so the number of Ironic calls per
introspection stays visible in one place.
"""

from __future__ import annotations

import collections
import copy
import functools
import logging
import os
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading
import openstack
from openstack import exceptions as sdk_exc
from openstack.config import cloud_region
from openstack.config import defaults as config_defaults
from oslo_config import cfg
from oslo_utils import uuidutils

from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.ironic import node as node_mod

if TYPE_CHECKING:
    from inspector_ha.ironic import pacing as pacing_mod

_T = TypeVar('_T')

LOG = logging.getLogger(__name__)
GROUP = 'ironic'
#: Ironic's service type in the catalog (openstacksdk reads ``[ironic]``
#: for it: the group is named after the project).
SERVICE_TYPE = 'baremetal'
#: The backend name in retry logs and BackendUnavailable.
BACKEND = 'ironic'

#: Provision states in which a node may be introspected (upstream's).
VALID_STATES = frozenset(['enroll', 'manageable', 'inspecting',
                          'inspect wait', 'inspect failed'])
#: States of a node in use; introspected only with ``[processing]
#: permit_active_introspection``, never powered off, ports untouched.
ACTIVE_STATES = frozenset(['active', 'rescue'])

NotFound = sdk_exc.NotFoundException
BadRequest = sdk_exc.BadRequestException
Error = sdk_exc.SDKException

#: Ironic's answer to a port whose MAC another port has (409).
MAC_EXISTS = 'already exists'

#: Calls answered only once the BMC has answered Ironic: their time says
#: nothing of Ironic's own load, so pacing does not judge by it.
BMC_BOUND = frozenset(['set_node_boot_device'])

#: A port as the processing hooks see it; ``address`` is lower-case.
Port = collections.namedtuple(
    'Port', 'id address local_link_connection physical_network pxe_enabled',
    defaults=(None,))
PORT_FIELDS = ['uuid', 'address', 'local_link_connection',
               'physical_network', 'pxe_enabled']


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, sdk_exc.HttpException):
        return (exc.status_code or 0) >= 500 or exc.status_code == 409
    return True


#: Ironic unreachable: refused, timed out, TLS failed, or its version
#: document could not be read (keystoneauth's discovery, at start and
#: in any call made before it succeeded), or an HTTP error worth
#: retrying (see ``_retryable``).
RETRYABLE = (ks_exc.ConnectionError, ks_exc.RetriableConnectionFailure,
             ks_exc.DiscoveryFailure, ks_exc.EndpointNotFound,
             sdk_exc.HttpException)


class _Endpoint:
    """``conn.baremetal``, discovered once for a facade and its paced
    copies."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.baremetal: Any = None
        self._discovering = threading.Lock()

    def adapter(self) -> Any:
        # NOTE: conn.baremetal discovers the API version on first access;
        # doing it here keeps that inside the retry policy, so a process
        # starts (and answers GET /) while Ironic is unreachable. One
        # thread discovers; the others wait for it instead of each asking
        # Ironic again.
        if self.baremetal is None:
            with self._discovering:
                if self.baremetal is None:
                    self.baremetal = _discovered(self._conn)
        return self.baremetal


def _discovered(conn: Any) -> Any:
    """``conn.baremetal``. NOTE: an endpoint of Keystone's catalog that
    does not answer makes openstacksdk raise ``NotSupported`` ("exists
    but does not have any supported versions") where an
    ``endpoint_override`` makes keystoneauth raise ``DiscoveryFailure``:
    both are Ironic unreachable, retried and then a 503 naming it."""
    try:
        return conn.baremetal
    except sdk_exc.NotSupported as exc:
        raise ks_exc.DiscoveryFailure(str(exc)) from exc


class Ironic:
    """A thin, retrying facade over ``conn.baremetal``."""

    def __init__(self, conn: Any, policy: retry.RetryPolicy) -> None:
        self._policy = policy
        self._endpoint = _Endpoint(conn)
        self._pacing: pacing_mod.Pacing | None = None

    def discover(self) -> threading.Thread:
        """Read Ironic's version document now, in a thread, so that
        calls need not wait for it (one made meanwhile waits for this
        thread); a failure is logged and left to the next call."""
        thread = threading.Thread(target=self._discover, daemon=True,
                                  name='ironic-discovery')
        thread.start()
        return thread

    def _discover(self) -> None:
        try:
            self._policy.call(self._adapter)
            return
        except retry.Interrupted:
            return
        except Exception as exc:  # the next call retries
            failure = retry.without_credentials(str(exc))
        # NOTE: logged outside the except block, where oslo.log would add
        # the exception's own text, credentials and all.
        LOG.warning("Ironic's API version was not read at start: %s",
                    failure)

    def paced(self, pacing: pacing_mod.Pacing) -> Ironic:
        """This facade, each of its calls (each attempt) made within
        ``pacing`` (:class:`inspector_ha.ironic.pacing.Pacing`)."""
        paced = copy.copy(self)
        paced._pacing = pacing
        return paced

    def _method(self, name: str) -> Any:
        return getattr(self._adapter(), name)

    def _adapter(self) -> Any:
        return self._endpoint.adapter()

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._measured(name, lambda: self._method(name)(*args,
                                                               **kwargs))

    def _list(self, name: str, **kwargs: Any) -> list[Any]:
        return self._measured(name, lambda: list(self._method(name)(
            **kwargs)))

    def _measured(self, name: str, func: Callable[[], _T]) -> _T:
        """``func`` under the retry policy, counted and timed by call."""
        result = 'error'
        if self._pacing is not None:
            func = functools.partial(self._paced, name, func)
        try:
            with metrics.Timer(metrics.series(metrics.IRONIC_SECONDS, name)):
                value = self._policy.call(func)
            result = 'ok'
            return value
        finally:
            metrics.series(metrics.IRONIC_CALLS, name, result).inc()

    def _paced(self, name: str, func: Callable[[], _T]) -> _T:
        # NOTE: only _measured calls it, and only with a pacing set.
        pacing = cast('pacing_mod.Pacing', self._pacing)
        with pacing.call(None if name in BMC_BOUND else name):
            return func()

    def api(self, method: str, path: str, microversion: str,
            json: Any = None, params: Mapping[str, Any] | None = None
            ) -> Any:
        """One REST call at ``microversion``, retried; its JSON. For the
        calls the service does not make itself (``export-to-ironic``)."""
        return self._request(path, method, path, params=params, json=json,
                             microversion=microversion)

    def _request(self, name: str, method: str, path: str,
                 params: Mapping[str, Any] | None = None, json: Any = None,
                 fence: Callable[[], object] | None = None,
                 microversion: str | None = None) -> Any:
        """One REST call on the baremetal endpoint (``conn.baremetal``'s
        request: the same session, endpoint and microversion as its
        methods) without openstacksdk's resource layer, for the calls of
        every introspection whose answer is JSON the facade reads itself;
        errors are openstacksdk's exceptions, as from its methods.
        ``fence()``, when given, is called just before each attempt is
        sent; what it raises ends the call unsent."""
        def once() -> Any:
            if fence is not None:
                fence()
            # NOTE: only when given: the adapter's own default is the
            # service's [ironic] api_version.
            versioned = {} if microversion is None else {
                'microversion': microversion}
            response = self._adapter().request(
                path, method, raise_exc=False, params=params, json=json,
                **versioned)
            sdk_exc.raise_from_response(response)
            return response.json() if response.content else None
        return self._measured(name, once)

    def _rows(self, collection: str, query: Mapping[str, Any] | None
              ) -> list[dict[str, Any]]:
        """Every page of ``GET /<collection>?<query>`` as dicts (each
        page one call, retried on its own)."""
        found: list[dict[str, Any]]
        path: str | None
        found, path = [], '/' + collection
        while path:
            page = self._request(collection, 'GET', path, params=query)
            found += page.get(collection) or []
            path, query = _next_page(page.get('next')), None
        return found

    def _port_rows(self, uuid: str, fields: list[str]
                   ) -> list[dict[str, Any]]:
        """The node's ports as dicts of ``fields``, every page."""
        return self._rows('ports', {'node_uuid': uuid,
                                    'fields': ','.join(fields)})

    def get_node(self, ident: str, fields: list[str] | None = None
                 ) -> node_mod.Node:
        """The node by UUID or name, as a :class:`~inspector_ha.ironic.
        node.Node` (openstacksdk's field names, without its resource
        layer); ``fields`` limits what Ironic sends."""
        params = {'fields': node_mod.ironic_fields(fields)} if fields else None
        path = '/nodes/%s' % urllib.parse.quote(ident, safe='')
        return node_mod.Node.from_ironic(
            self._request('get_node', 'GET', path, params=params), ident)

    def validate_power(self, uuid: str) -> None:
        """Raise openstacksdk's ``ValidationException`` (its words) if
        Ironic says the node's power interface is not valid."""
        power = (self._request('validate_node', 'GET',
                               '/nodes/%s/validate' % uuid) or {}
                 ).get('power') or {}
        if not power.get('result'):
            raise sdk_exc.ValidationException(
                'Validation failed for required interfaces of node %s: '
                'power (%s)' % (uuid, power.get('reason', 'no reason')))

    def port_macs(self, uuid: str) -> list[str]:
        return [p['address'].lower()
                for p in self._port_rows(uuid, ['address'])]

    def set_pxe_boot(self, uuid: str, persistent: bool = False) -> None:
        self._request('set_node_boot_device', 'PUT',
                      '/nodes/%s/management/boot_device' % uuid,
                      json={'boot_device': 'pxe', 'persistent': persistent})

    def reboot(self, uuid: str,
               fence: Callable[[], object] | None = None) -> None:
        self._power(uuid, 'rebooting', fence)

    def power_off(self, uuid: str,
                  fence: Callable[[], object] | None = None) -> None:
        self._power(uuid, 'power off', fence)

    def _power(self, uuid: str, target: str,
               fence: Callable[[], object] | None) -> None:
        self._request('set_node_power_state', 'PUT',
                      '/nodes/%s/states/power' % uuid, json={'target': target},
                      fence=fence)

    def patch_node(self, uuid: str, patch: list[dict[str, Any]],
                   reset_interfaces: bool | None = None) -> None:
        if patch:
            params = ({'reset_interfaces': reset_interfaces}
                      if reset_interfaces is not None else None)
            self._request('patch_node', 'PATCH', '/nodes/%s' % uuid,
                          json=patch, params=params)

    def add_trait(self, uuid: str, name: str) -> None:
        self._call('add_node_trait', uuid, name)

    def remove_trait(self, uuid: str, name: str) -> None:
        self._call('remove_node_trait', uuid, name, ignore_missing=True)

    def create_port(self, uuid: str, address: str, pxe_enabled: bool = True,
                    extra: dict[str, Any] | None = None) -> str | None:
        """Create a port; return its id, or None if the MAC has a port
        already (created by an earlier try, or by another). Other
        conflicts (the node is locked) are retried."""
        return self._measured('create_port', lambda: self._create_port_once(
            uuid, address, pxe_enabled, extra or {}))

    def _create_port_once(self, uuid: str, address: str, pxe_enabled: bool,
                          extra: dict[str, Any]) -> str | None:
        try:
            return self._method('create_port')(
                node_uuid=uuid, address=address, is_pxe_enabled=pxe_enabled,
                extra=extra).id
        except sdk_exc.ConflictException as exc:
            if MAC_EXISTS not in str(exc):
                raise
            LOG.info('Port %s of node %s already exists', address, uuid)
            return None

    def node_uuids(self) -> set[str]:
        return {n['uuid'] for n in self._rows('nodes', {'fields': 'uuid'})}

    def ports(self, uuid: str) -> list[Port]:
        """The node's ports as :class:`Port` tuples (id, address, ...)."""
        return [Port(p['uuid'], p['address'].lower(),
                     p.get('local_link_connection') or {},
                     p.get('physical_network'), p.get('pxe_enabled'))
                for p in self._port_rows(uuid, PORT_FIELDS)]

    def all_ports(self, after: str | None = None) -> list[dict[str, Any]]:
        """Ports as ``{'id', 'address', 'extra'}`` dicts in creation
        order: every one, or only those created after the port ``after``
        (:class:`NotFound` if that port is gone)."""
        query = {'fields': 'uuid,address,extra'}
        if after:
            query['marker'] = after
        return [{'id': p['uuid'], 'address': p['address'].lower(),
                 'extra': p.get('extra') or {}}
                for p in self._rows('ports', query)]

    def delete_port(self, port_id: str) -> None:
        """Delete a port; one already gone is no error."""
        self._call('delete_port', port_id, ignore_missing=True)

    def patch_port(self, port_id: str, patch: list[dict[str, Any]]
                   ) -> None:
        if patch:
            self._call('patch_port', port_id, patch)

    def port_owner(self, address: str) -> tuple[str, str] | None:
        """``(port id, node uuid)`` of the port with this MAC, or None."""
        ports = self._list('ports', address=address,
                           fields=['uuid', 'node_uuid'])
        return (ports[0].id, ports[0].node_id) if ports else None

    def nodes_with_driver_info(self) -> list[Any]:
        """Every node, with only its UUID and driver_info (one listing)."""
        return self._list('nodes', fields=['uuid', 'driver_info'])

    def create_node(self, **attrs: Any) -> Any:
        """Create a node; retrying it cannot create a second one.

        The UUID is chosen here, so an attempt whose answer was lost and
        that is retried meets a conflict on that UUID, which means the
        node exists.
        """
        attrs.setdefault('id', uuidutils.generate_uuid())
        return self._measured('create_node',
                              lambda: self._create_node_once(attrs))

    def _create_node_once(self, attrs: dict[str, Any]) -> Any:
        try:
            return self._method('create_node')(**attrs)
        except sdk_exc.ConflictException as exc:
            try:
                return self._method('get_node')(attrs['id'])
            except NotFound:
                # NOTE: a conflict on something else (a name): retrying
                # cannot help, and Error is not retried.
                raise Error('Cannot create node %s: %s' % (attrs['id'],
                                                            exc)) from None

    def delete_node(self, uuid: str) -> None:
        self._call('delete_node', uuid, ignore_missing=True)


#: Variables through which requests' environment sends a call through
#: a proxy (any case, as urllib reads them).
PROXIES = ('http_proxy', 'https_proxy', 'all_proxy', 'no_proxy')
#: Variables naming the CA bundle requests verifies with, in its order.
CA_BUNDLES = ('REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE')


def _trust_environment(session: Any, environ: Mapping[str, str]) -> bool:
    """Whether requests must read the environment on every call (a few %
    of a worker's CPU: proxy variables, ~/.netrc): only where a proxy
    variable is set. A CA bundle variable is read once here instead,
    into keystoneauth's ``verify``, as requests would use it."""
    if any(name.lower() in PROXIES for name in environ):
        return True
    bundle = next((environ[name] for name in CA_BUNDLES
                   if environ.get(name)), None)
    if bundle and session.verify is True:
        session.verify = bundle
    return False


def _next_page(link: str | None) -> str | None:
    """The path of Ironic's ``next`` link, relative to the baremetal
    endpoint (``/ports?...&marker=...``), or None."""
    if not link:
        return None
    path = urllib.parse.urlsplit(link)
    rest = path.path.split('/v1', 1)[-1]
    return rest + ('?' + path.query if path.query else '')


def connect(conf: cfg.ConfigOpts, stop: threading.Event) -> Ironic:
    """Build the facade from ``[ironic]`` (keystoneauth options)."""
    auth = loading.load_auth_from_conf_options(conf, GROUP)
    session = loading.load_session_from_conf_options(conf, GROUP, auth=auth)
    session.session.trust_env = _trust_environment(session, os.environ)
    group = conf[GROUP]
    # NOTE: openstacksdk reads [ironic]'s keystoneauth adapter options
    # itself (endpoint_override, region_name, valid_interfaces,
    # service_type, status_code_retries...), as services built on
    # oslo.config hand them to it; the microversion is ours.
    region = cloud_region.from_conf(
        conf, session=session, service_types=[SERVICE_TYPE],
        config=dict(config_defaults.get_defaults(),
                    baremetal_api_version=group.api_version))
    conn = openstack.connection.Connection(config=region)
    policy = retry.RetryPolicy(BACKEND, group.retry_count,
                               group.retry_timeout, stop, RETRYABLE,
                               retry_if=_retryable,
                               location=location(conf))
    return Ironic(conn, policy)


def location(conf: cfg.ConfigOpts) -> str | None:
    """Ironic's URL as configured, without any user name or password:
    ``endpoint_override``, else the Keystone catalog at ``auth_url``."""
    group = conf[GROUP]
    if group.endpoint_override:
        return retry.without_credentials(group.endpoint_override)
    try:
        auth_url = group.auth_url
    except cfg.NoSuchOptError:
        auth_url = None
    if auth_url:
        return 'the catalog of %s' % retry.without_credentials(auth_url)
    return None
