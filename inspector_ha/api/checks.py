"""Checks and facts about an Ironic node before introspection starts."""

import ipaddress
import socket
from urllib import parse

from openstack import exceptions as sdk_exc

from inspector_ha.api import errors
from inspector_ha.common import addresses
from inspector_ha.ironic import client

def check_startable(service, node, manage_boot):
    """Refuse (400) a node Ironic would not let us introspect."""
    if node.provision_state not in client.VALID_STATES and not (
            service.conf.processing.permit_active_introspection and
            node.provision_state in client.ACTIVE_STATES):
        raise errors.ApiError(
            'Refusing to introspect node %s with provision state "%s" and '
            'maintenance mode %s' % (node.id, node.provision_state,
                                     'on' if node.is_maintenance else 'off'))
    if manage_boot:
        try:
            service.ironic.validate_power(node.id)
        except sdk_exc.ValidationException as exc:
            raise errors.ApiError('Failed validation of power interface: %s'
                                  % exc) from None


def bmc_addresses(conf, node):
    """The IPv4/IPv6 addresses of the node's BMC, for lookup."""
    info = node.driver_info or {}
    fields = ['ipmi_address'] + list(conf.ipmi_address_fields)
    value = next((info[f] for f in fields if info.get(f)), None)
    if not value or info.get('ipmi_bridging', 'no') != 'no':
        return []
    return [a for a in _resolve(_host_of(str(value)))
            if a not in addresses.NO_BMC]


def _host_of(value):
    if '//' in value:
        value = parse.urlparse(value).hostname or ''
    return value.strip('[]')


def _resolve(host):
    try:
        address = ipaddress.ip_address(host)
        return [] if address.is_loopback else [str(address)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    return sorted({info[4][0] for info in infos
                   if not ipaddress.ip_address(info[4][0]).is_loopback})
