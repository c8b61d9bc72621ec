"""[pxe_filter]: the HA PXE filter (which driver, how it is fed, what
every driver filters). A driver's own options are in its module."""

from __future__ import annotations

from oslo_config import cfg

GROUP = 'pxe_filter'


def _12_5(name: str) -> cfg.DeprecatedOpt:
    """Where ironic-inspector 12.5 has an option every driver reads."""
    return cfg.DeprecatedOpt(name, group='iptables')


OPTS = [
    cfg.StrOpt('driver', default='noop',
               help='PXE filter driver (entry point of '
                    'inspector_ha.pxe_filter). The default, noop, touches '
                    'nothing, so the quick start never changes the host '
                    'firewall; a cluster sharing one PXE network needs a '
                    'real driver.'),
    # NOTE: what every driver reads; a configuration file of
    # ironic-inspector 12.5 sets them in [iptables].
    cfg.StrOpt('dnsmasq_interface', default='br-ctlplane',
               deprecated_opts=[_12_5('dnsmasq_interface')],
               help='Interface the PXE DHCP server listens on; every '
                    'filter driver filters DHCP arriving on it.'),
    cfg.ListOpt('ethoib_interfaces', default=[],
                deprecated_opts=[_12_5('ethoib_interfaces')],
                help='Ethernet over InfiniBand interfaces whose '
                     'eth/neighs map port GUIDs to EoIB MACs.'),
    cfg.StrOpt('ip_version', default='4',
               choices=[('4', 'DHCPv4 (UDP 67)'),
                        ('6', 'DHCPv6 (UDP 547, ip6tables)')],
               deprecated_opts=[_12_5('ip_version')],
               help='IP version of the PXE DHCP service.'),
    cfg.FloatOpt('sync_period', default=15.0, min=0.0, max=315576000.0,
                 help='Seconds between polls of Ironic for the black-list '
                      '(ports of nodes not under introspection); 0 '
                      'disables polling.'),
    cfg.FloatOpt('whitelist_period', default=15.0, min=0.0, max=30.0,
                 help='Seconds between polls of the store for the '
                      'white-list (MACs under introspection) by the '
                      'leader; 0 disables polling.'),
    cfg.BoolOpt('blacklist_pubsub', default=True,
                help='Follow black-list changes announced on the '
                     'pub-sub channel (by the port watcher), and the whole '
                     'black-list announced by the elected lister instead '
                     'of listing Ironic every sync_period.'),
    cfg.FloatOpt('blacklist_list_period', default=600.0, min=0.0,
                 max=86400.0,
                 help='With blacklist_pubsub: seconds between the elected '
                      'lister\'s listings of every Ironic port, each '
                      'announced as the whole black-list; a member lists '
                      'Ironic itself (every sync_period) only while none '
                      'has come for 1.5 times this. New ports come within '
                      'about a second through the port watcher; this '
                      'bounds how long a deleted port stays black-listed. '
                      'At 20,000 ports a listing costs Ironic about 4 s of '
                      'CPU. 0 disables the lister.'),
    cfg.FloatOpt('port_watch_period', default=0.5, min=0.0, max=30.0,
                 help='Seconds between the elected port watcher\'s '
                      'queries for ports created in Ironic since the last '
                      'one it saw (one small listing), each announced on '
                      'the black-list channel; 0 disables it. Ironic 39 '
                      'sends no port notifications (its PortCRUDPayload '
                      'fails to build), so this is what makes a new port '
                      'blacklisted everywhere within about a second.'),
    cfg.BoolOpt('whitelist_pubsub', default=True,
                help='Follow white-list changes announced on the '
                     'pub-sub channel (leader only).'),
    cfg.FloatOpt('apply_delay', default=0.2, min=0.0, max=0.5,
                 help='Seconds the firewall leader gathers the white-list '
                      'changes that follow one (introspections starting or '
                      'ending) before applying them together: one '
                      'firewall command and one fence for a burst instead '
                      'of one each. A black-list change is applied at '
                      'once; 0 applies every change at once.'),
    cfg.BoolOpt('deny_unknown_macs', default=False,
                help='Refuse DHCP to MACs Ironic does not know (only the '
                     'white-list boots). Not compatible with '
                     '[processing] node_not_found_hook.'),
    cfg.FloatOpt('open_lease', default=2.0, min=0.5, max=60.0,
                 help='Seconds the leader\'s pass rule stays open without '
                      'renewal (kernel-enforced with nftables), and how '
                      'long a new leader waits before opening.'),
    cfg.ListOpt('command_prefix', default=[],
                help='Prepended to every firewall command, e.g. "sudo" '
                     'or "ip,netns,exec,NAME".'),
    cfg.FloatOpt('command_timeout', default=10.0, min=1.0, max=120.0,
                 help='Seconds a firewall command may run before it is '
                      'killed and counts as failed.'),
]
