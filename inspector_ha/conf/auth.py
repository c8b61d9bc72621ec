"""[DEFAULT] options of API authentication besides ``auth_strategy``."""

from oslo_config import cfg

GROUP = None

OPTS = [
    cfg.StrOpt('http_basic_auth_user_file',
               default='/etc/inspector-ha/htpasswd',
               help='Path to an Apache htpasswd file of bcrypt hashes, '
                    'used when auth_strategy is http_basic. It is read '
                    'again on every request.'),
]
