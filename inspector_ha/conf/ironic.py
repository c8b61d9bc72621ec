"""[ironic]: how to reach Ironic (keystoneauth options are added too)."""

from keystoneauth1 import loading
from oslo_config import cfg

from inspector_ha.conf import retry

GROUP = 'ironic'

OPTS = [
    cfg.StrOpt('api_version', default='1.81',
               help='Bare metal API microversion requested from Ironic.'),
] + retry.retry_opts(
    'Attempts of an Ironic call before giving up.',
    'Pause between Ironic attempts, in seconds.')

# keystoneauth's own options (auth_type, endpoint_override, ...) keep the
# names operators already use in ironic-inspector's [ironic] section.
OPTS += loading.get_session_conf_options()
OPTS += loading.get_adapter_conf_options(include_deprecated=False)
OPTS += loading.get_auth_common_conf_options()
# NOTE: every Ironic call is retried by the service's own policy
# ([ironic] retry_count), not again inside openstacksdk.
cfg.set_defaults(OPTS, status_code_retries=0)
