"""[periodic]: singleton periodic jobs and their leaders."""

from oslo_config import cfg

GROUP = 'periodic'

OPTS = [
    cfg.FloatOpt('campaign_period', default=0.25, min=0.05, max=60.0,
                 help='How often a member that does not lead a periodic '
                      'task (or the firewall) tries to become its leader, '
                      'in seconds, when it starts and after a member left '
                      'the group, for [coordination] lease_timeout + '
                      'watch_period seconds (a dead leader\'s lock lapses '
                      'with its membership). It bounds leader failover.'),
    cfg.FloatOpt('steady_campaign_period', default=2.0, min=0.05,
                 max=600.0,
                 help='How often a member that does not lead tries to '
                      'lead while no member has left the group, in '
                      'seconds: a safety net, since a leader that dies, '
                      'stops or is paused past its lease leaves the '
                      'group. With the file:// backend, which sees no '
                      'member leave, it bounds failover.'),
    cfg.IntOpt('ironic_sync_period', default=300, min=0, max=86400,
               help='Seconds between removals of nodes Ironic no longer '
                    'has (each lists every Ironic node: at 10,000 nodes '
                    'about 2.6 s of Ironic\'s CPU); 0 disables them.'),
    cfg.IntOpt('data_cleanup_period', default=3600, min=0, max=86400,
               help='Seconds between clean-ups of old introspection data; '
                    '0 disables them.'),
    cfg.IntOpt('data_expiry', default=86400, min=1, max=365 * 86400,
               help='Introspection data and finished requests older than '
                    'this many seconds are removed.'),
]
