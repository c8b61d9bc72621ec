"""[DEFAULT]: the options upstream ironic-inspector has in [DEFAULT]."""

import socket

from oslo_config import cfg

GROUP = None

OPTS = [
    cfg.BoolOpt('debug', default=False, help='Log at debug level.'),
    cfg.HostAddressOpt('listen_address', default='::',
                       help='IP address the API listens on.'),
    cfg.PortOpt('listen_port', default=5050,
                help='Port the API listens on.'),
    cfg.StrOpt('state_path', default='/var/lib/inspector-ha',
               help='Directory of the embedded default backends.'),
    cfg.StrOpt('host', default=socket.getfqdn(), sample_default='localhost',
               help='Name of this process host, used as its member id.'),
    cfg.StrOpt('auth_strategy', default='noauth',
               choices=[('noauth', 'no authentication'),
                        ('http_basic', 'HTTP basic authentication'),
                        ('keystone', 'OpenStack Identity')],
               help='Authentication method of the API.'),
    cfg.IntOpt('timeout', default=3600, min=0, max=86400,
               help='Introspection timeout in seconds; 0 disables it.'),
    cfg.IntOpt('clean_up_period', default=60, min=0, max=86400,
               help='Seconds between checks for timed-out introspections; '
                    '0 disables them.'),
    cfg.IntOpt('api_max_limit', default=1000, min=1, max=100000,
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
]
