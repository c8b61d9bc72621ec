"""[discovery]: the ``enroll`` node-not-found hook."""

from oslo_config import cfg
from oslo_config import types

GROUP = 'discovery'

OPTS = [
    cfg.StrOpt('enroll_node_driver', default='fake-hardware',
               help='Hardware type (driver) of the Ironic nodes the enroll '
                    'hook creates.'),
    cfg.DictOpt('enroll_node_fields', default={},
                help='More fields of the Ironic nodes the enroll hook '
                     'creates, as name:value pairs (for example '
                     'conductor_group:rack1,resource_class:baremetal).'),
    cfg.ListOpt('enabled_bmc_address_version', default=['4', '6'],
                item_type=types.String(choices=['4', '6']),
                help='BMC address versions the enroll hook stores as the '
                     'new node\'s ipmi_address, in order of preference: '
                     '"4,6" (IPv4 first), "6,4", "4" or "6".'),
]
