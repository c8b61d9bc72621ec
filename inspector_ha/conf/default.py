"""[DEFAULT]: the options upstream ironic-inspector has in [DEFAULT]."""

import socket

from oslo_config import cfg

from inspector_ha.coordination import releases

GROUP = None
#: Upstream's cap on its timeout (a timedelta overflows beyond).
TEN_YEARS = 315576000

OPTS = [
    cfg.HostAddressOpt('listen_address', default='::',
                       help='IP address the API listens on.'),
    cfg.PortOpt('listen_port', default=5050,
                help='Port the API listens on.'),
    cfg.BoolOpt('use_ssl', default=False,
                help='Serve the API over TLS ([ssl] cert_file, key_file).'),
    cfg.StrOpt('state_path', default='/var/lib/inspector-ha',
               help='Directory of the embedded default backends.'),
    cfg.StrOpt('host', default=socket.getfqdn(), sample_default='localhost',
               help='Name of this process host, used as its member id.'),
    cfg.StrOpt('auth_strategy', default='keystone',
               choices=[('noauth', 'no authentication'),
                        ('http_basic', 'HTTP basic authentication'),
                        ('keystone', 'OpenStack Identity')],
               help='Authentication method of the API. The embedded '
                    'default (inspector-ha run without a configuration '
                    'file, listening on 127.0.0.1) uses noauth; noauth '
                    'on any other address is logged as a warning.'),
    # NOTE: the bounds of options ironic-inspector has are at least its
    # own (tests/unit/test_upstream_config.py): an existing
    # ironic-inspector.conf must keep working.
    cfg.IntOpt('timeout', default=3600, min=-TEN_YEARS, max=TEN_YEARS,
               help='Introspection timeout in seconds; 0 or less disables '
                    'it.'),
    cfg.IntOpt('clean_up_period', default=60, min=0, max=TEN_YEARS,
               help='Seconds between checks for timed-out introspections; '
                    '0 disables them.'),
    cfg.IntOpt('api_max_limit', default=1000, min=1, max=2 ** 31 - 1,
               help='Maximum and default page size of list calls.'),
    cfg.BoolOpt('can_manage_boot', default=True,
                help='Whether the service may manage boot (power and '
                     'boot device) of nodes.'),
    cfg.IntOpt('max_request_bytes', default=4 * 1024 * 1024, min=1024,
               max=256 * 1024 * 1024,
               help='Largest request body the API accepts (413 beyond).'),
    cfg.ListOpt('ipmi_address_fields',
                default=['redfish_address', 'ilo_address', 'drac_host',
                         'drac_address', 'ibmc_address'],
                help='driver_info fields holding the BMC address, after '
                     'ipmi_address.'),
    cfg.IntOpt('malloc_arenas', default=2, min=0, max=1024,
               help='Most malloc arenas of the process (glibc; what the '
                    'MALLOC_ARENA_MAX environment variable sets, which '
                    'wins when set): each thread that meets contention '
                    'otherwise gets its own, up to 8 per core, each '
                    'keeping what was freed in it. 0: glibc\'s default.'),
    cfg.StrOpt('pin_release_version', choices=sorted(releases.RELEASES),
               help='Speak at most this release (objects on the wire, '
                    'queued events) during a rolling upgrade; unset, a '
                    'member speaks the oldest release of the live members. '
                    'Unset it once every member runs the new release.'),
]
