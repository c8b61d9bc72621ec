"""[ironic]: how to reach Ironic (keystoneauth options are added too)."""

from keystoneauth1 import loading
from oslo_config import cfg

GROUP = 'ironic'

OPTS = [
    cfg.IntOpt('retry_count', default=5, min=0, max=1000,
               help='Attempts of an Ironic call before giving up.'),
    cfg.FloatOpt('retry_timeout', default=1.0, min=0.0, max=300.0,
                 help='Pause between Ironic attempts, in seconds.'),
    cfg.StrOpt('api_version', default='1.81',
               help='Bare metal API microversion requested from Ironic.'),
]

# keystoneauth's own options (auth_type, endpoint_override, ...) keep the
# names operators already use in ironic-inspector's [ironic] section.
OPTS += loading.get_session_conf_options()
OPTS += loading.get_adapter_conf_options(include_deprecated=False)
OPTS += loading.get_auth_common_conf_options()
