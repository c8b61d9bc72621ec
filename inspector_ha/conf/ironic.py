"""[ironic]: how to reach Ironic (keystoneauth options are added too)."""

from keystoneauth1 import loading
from oslo_config import cfg

from inspector_ha.conf import retry

GROUP = 'ironic'

OPTS = [
    cfg.StrOpt('api_version', default='1.81',
               help='Bare metal API microversion requested from Ironic.'),
    cfg.IntOpt('max_concurrent_writes', default=16, min=0, max=1024,
               help='Most Ironic writes (power changes, node and port '
                    'updates, port creations, traits added) one process '
                    'has in flight at once. Below it the limit adapts: '
                    'it drops while their latency exceeds twice the '
                    'lowest seen and rises again as it falls, so that '
                    'the cluster keeps Ironic busy without queueing in '
                    'it. 0: no limit.'),
] + retry.retry_opts(
    'Attempts of an Ironic call before giving up.',
    'Pause between Ironic attempts, in seconds.')

# keystoneauth's own options (auth_type, endpoint_override, ...) keep the
# names operators already use in ironic-inspector's [ironic] section.
OPTS += loading.get_session_conf_options()
OPTS += loading.get_adapter_conf_options(include_deprecated=False)
OPTS += loading.get_auth_common_conf_options()
