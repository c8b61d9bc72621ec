"""[port_physnet]: the ``physnet_cidr_map`` processing hook."""

from oslo_config import cfg

GROUP = 'port_physnet'

OPTS = [
    cfg.ListOpt('cidr_map', default=[],
                help='CIDR:physical network pairs, e.g. '
                     '10.10.10.0/24:physnet_a,2001:db8::/64:physnet_b: an '
                     'Ironic port whose interface has an address in the '
                     'CIDR gets that physical_network.'),
]
