"""Ironic through openstacksdk, every call retried per ``[ironic]``.

Only the calls inspector-ha needs, so the number of Ironic calls per
introspection stays visible in one place.
"""

import collections
import logging

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading
import openstack
from openstack import exceptions as sdk_exc
from oslo_config import cfg
from oslo_utils import uuidutils

from inspector_ha.common import metrics
from inspector_ha.common import retry

LOG = logging.getLogger(__name__)
GROUP = 'ironic'
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

#: A port as the processing hooks see it; ``address`` is lower-case.
Port = collections.namedtuple(
    'Port', 'id address local_link_connection physical_network pxe_enabled',
    defaults=(None,))
PORT_FIELDS = ['uuid', 'address', 'local_link_connection',
               'physical_network', 'pxe_enabled']


def _retryable(exc):
    if isinstance(exc, sdk_exc.HttpException):
        return (exc.status_code or 0) >= 500 or exc.status_code == 409
    return True


#: Ironic unreachable: refused, timed out, TLS failed, or its version
#: document could not be read (keystoneauth's discovery runs on the
#: first call), or an HTTP error worth retrying (see ``_retryable``).
RETRYABLE = (ks_exc.ConnectionError, ks_exc.RetriableConnectionFailure,
             ks_exc.DiscoveryFailure, ks_exc.EndpointNotFound,
             sdk_exc.HttpException)


class Ironic:
    """A thin, retrying facade over ``conn.baremetal``."""

    def __init__(self, conn, policy):
        self._conn = conn
        self._policy = policy

    def _method(self, name):
        # NOTE: conn.baremetal discovers the API version on first access;
        # doing it here keeps that inside the retry policy, so a process
        # starts (and answers GET /) while Ironic is unreachable.
        return getattr(self._conn.baremetal, name)

    def _call(self, name, *args, **kwargs):
        return self._measured(name, lambda: self._method(name)(*args,
                                                               **kwargs))

    def _list(self, name, **kwargs):
        return self._measured(name, lambda: list(self._method(name)(
            **kwargs)))

    def _measured(self, name, func):
        """``func`` under the retry policy, counted and timed by call."""
        result = 'error'
        try:
            with metrics.Timer(metrics.IRONIC_SECONDS.labels(name)):
                value = self._policy.call(func)
            result = 'ok'
            return value
        finally:
            metrics.IRONIC_CALLS.labels(name, result).inc()

    def get_node(self, ident, fields=None):
        return self._call('get_node', ident, fields=fields)

    def validate_power(self, uuid):
        return self._call('validate_node', uuid, required=('power',))

    def port_macs(self, uuid):
        return [p.address.lower() for p in
                self._list('ports', node_uuid=uuid, fields=['address'])]

    def set_pxe_boot(self, uuid, persistent=False):
        self._call('set_node_boot_device', uuid, 'pxe', persistent=persistent)

    def reboot(self, uuid):
        self._call('set_node_power_state', uuid, 'rebooting')

    def power_off(self, uuid):
        self._call('set_node_power_state', uuid, 'power off')

    def patch_node(self, uuid, patch, reset_interfaces=None):
        if patch:
            self._call('patch_node', uuid, patch,
                       reset_interfaces=reset_interfaces)

    def add_trait(self, uuid, name):
        self._call('add_node_trait', uuid, name)

    def remove_trait(self, uuid, name):
        self._call('remove_node_trait', uuid, name, ignore_missing=True)

    def create_port(self, uuid, address, pxe_enabled=True, extra=None):
        """Create a port; return its id, or None if the MAC has a port
        already (created by an earlier try, or by another). Other
        conflicts (the node is locked) are retried."""
        return self._policy.call(self._create_port_once, uuid, address,
                                 pxe_enabled, extra or {})

    def _create_port_once(self, uuid, address, pxe_enabled, extra):
        try:
            return self._method('create_port')(
                node_uuid=uuid, address=address, is_pxe_enabled=pxe_enabled,
                extra=extra).id
        except sdk_exc.ConflictException as exc:
            if MAC_EXISTS not in str(exc):
                raise
            LOG.info('Port %s of node %s already exists', address, uuid)
            return None

    def node_uuids(self):
        return {n.id for n in self._list('nodes', fields=['uuid'])}

    def ports(self, uuid):
        """The node's ports as :class:`Port` tuples (id, address, ...)."""
        return [Port(p.id, p.address.lower(), p.local_link_connection or {},
                     p.physical_network, p.is_pxe_enabled)
                for p in self._list('ports', node_uuid=uuid,
                                    fields=PORT_FIELDS)]

    def all_ports(self, after=None):
        """Ports as ``{'id', 'address', 'extra'}`` dicts in creation
        order: every one, or only those created after the port ``after``
        (:class:`NotFound` if that port is gone)."""
        query = {'marker': after} if after else {}
        return [{'id': p.id, 'address': p.address.lower(),
                 'extra': p.extra or {}}
                for p in self._list('ports', fields=['uuid', 'address',
                                                     'extra'], **query)]

    def delete_port(self, port_id):
        """Delete a port; one already gone is no error."""
        self._call('delete_port', port_id, ignore_missing=True)

    def patch_port(self, port_id, patch):
        if patch:
            self._call('patch_port', port_id, patch)

    def port_owner(self, address):
        """``(port id, node uuid)`` of the port with this MAC, or None."""
        ports = self._list('ports', address=address,
                           fields=['uuid', 'node_uuid'])
        return (ports[0].id, ports[0].node_id) if ports else None

    def nodes_with_driver_info(self):
        """Every node, with only its UUID and driver_info (one listing)."""
        return self._list('nodes', fields=['uuid', 'driver_info'])

    def create_node(self, **attrs):
        """Create a node; retrying it cannot create a second one.

        The UUID is chosen here, so an attempt whose answer was lost and
        that is retried meets a conflict on that UUID, which means the
        node exists.
        """
        attrs.setdefault('id', uuidutils.generate_uuid())
        return self._measured('create_node',
                              lambda: self._create_node_once(attrs))

    def _create_node_once(self, attrs):
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

    def delete_node(self, uuid):
        self._call('delete_node', uuid, ignore_missing=True)


def connect(conf, stop):
    """Build the facade from ``[ironic]`` (keystoneauth options)."""
    auth = loading.load_auth_from_conf_options(conf, GROUP)
    session = loading.load_session_from_conf_options(conf, GROUP, auth=auth)
    group = conf[GROUP]
    conn = openstack.connection.Connection(
        session=session, baremetal_endpoint_override=group.endpoint_override,
        baremetal_api_version=group.api_version,
        baremetal_status_code_retries=0)
    policy = retry.RetryPolicy(BACKEND, group.retry_count,
                               group.retry_timeout, stop, RETRYABLE,
                               retry_if=_retryable,
                               location=location(conf))
    return Ironic(conn, policy)


def location(conf):
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
