"""[coordination]: tooz, for node locks, membership and leaders."""

from oslo_config import cfg

GROUP = 'coordination'

OPTS = [
    cfg.StrOpt('backend_url', secret=True,
               default='file://$state_path/coordination',
               help='tooz backend URL: redis://, zookeeper://, '
                    'etcd3+http://, file://.'),
    cfg.IntOpt('retry_count', default=5, min=0, max=1000,
               help='Attempts of a coordination call before giving up.'),
    cfg.FloatOpt('retry_timeout', default=1.0, min=0.0, max=300.0,
                 help='Pause between coordination attempts, in seconds.'),
]
