"""[coordination]: tooz, for node locks, membership and leaders."""

from oslo_config import cfg

from inspector_ha.conf import retry

GROUP = 'coordination'

OPTS = [
    cfg.StrOpt('backend_url', secret=True,
               default='file://$state_path/coordination',
               help='tooz backend URL: redis://, zookeeper://, '
                    'etcd3+http://, file://.'),
    cfg.IntOpt('lease_timeout', default=2, min=1, max=300,
                 help='Expiry of a dead member\'s locks, leaderships and '
                      'membership, in whole seconds (tooz\'s Redis driver '
                      'takes integers), passed to tooz as the URL option '
                      '"timeout" unless the URL sets it (Redis lock and '
                      'membership timeout, ZooKeeper session timeout, '
                      'which the server may round up to 2 ticks). It '
                      'bounds leader failover after a crash.'),
    cfg.FloatOpt('watch_period', default=0.5, min=0.05, max=60.0,
                 help='How often a worker process checks group '
                      'membership changes (an API process that leads '
                      'nothing: every lease_timeout, or this if '
                      'longer).'),
] + retry.retry_opts(
    'Attempts of a coordination call before giving up.',
    'Pause between coordination attempts, in seconds.')
