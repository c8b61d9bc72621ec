"""[dnsmasq_pxe_filter]: the dnsmasq dhcp-hostsdir PXE filter driver."""

from oslo_config import cfg

GROUP = 'dnsmasq_pxe_filter'

OPTS = [
    cfg.StrOpt('dhcp_hostsdir',
               default='/var/lib/inspector-ha/dhcp-hostsdir',
               help='dnsmasq --dhcp-hostsdir the driver writes one file '
                    'per MAC into.'),
    cfg.BoolOpt('purge_dhcp_hostsdir', default=True,
                help='Delete the files of an earlier run at start; set '
                     'False when several processes share the directory.'),
    cfg.StrOpt('dnsmasq_start_command', default='',
               help='Shell command run after the filter is set up, e.g. '
                    'to start dnsmasq; empty: none.'),
    cfg.StrOpt('dnsmasq_stop_command', default='',
               help='Shell command run when the filter is blocked, e.g. '
                    'to stop dnsmasq; empty: none.'),
]
