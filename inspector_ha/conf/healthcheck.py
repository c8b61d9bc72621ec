"""[healthcheck]: oslo.middleware's options, with our defaults.

``disable_by_file`` is on: creating ``$state_path/healthcheck_disable``
makes ``/healthcheck`` answer 503 so a load balancer drains the host. Our
own backend check is always added (``inspector_ha.api.health``).
"""

from oslo_config import cfg
from oslo_middleware.healthcheck import opts

GROUP = 'healthcheck'

cfg.set_defaults(opts.HEALTHCHECK_OPTS, backends=['disable_by_file'])
cfg.set_defaults(opts.DISABLE_BY_FILE_OPTS,
                 disable_by_file_path='$state_path/healthcheck_disable')

OPTS = opts.HEALTHCHECK_OPTS + opts.DISABLE_BY_FILE_OPTS
