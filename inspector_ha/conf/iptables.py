"""[iptables]: the PXE interface (for every driver) and iptables chains."""

from oslo_config import cfg

GROUP = 'iptables'

OPTS = [
    cfg.StrOpt('dnsmasq_interface', default='br-ctlplane',
               help='Interface the PXE DHCP server listens on; every '
                    'filter driver filters DHCP arriving on it.'),
    cfg.StrOpt('firewall_chain', default='ironic-inspector',
               help='Prefix of the iptables chains (<prefix>-white, '
                    '<prefix>-black).'),
    cfg.ListOpt('ethoib_interfaces', default=[],
                help='Ethernet over InfiniBand interfaces whose '
                     'eth/neighs map port GUIDs to EoIB MACs.'),
    cfg.StrOpt('ip_version', default='4',
               choices=[('4', 'DHCPv4 (UDP 67)'),
                        ('6', 'DHCPv6 (UDP 547, ip6tables)')],
               help='IP version of the PXE DHCP service.'),
]
