"""[worker]: the pool of workers taking state-transition requests."""

import os

from oslo_config import cfg

GROUP = 'worker'

OPTS = [
    cfg.IntOpt('pool_size', default=os.cpu_count() or 1, min=1, max=1024,
               sample_default='<cpu count>',
               help='Number of worker threads in each process. One per '
                    'CPU suits one Ironic process, which more calls in '
                    'flight only slow (4 instead of 2 cost the embedded '
                    'default 14-18%); against an Ironic of several '
                    'processes whose database pools keep their '
                    'connections, twice as many made it 19-30% faster '
                    '(benchmarks/results/README.md, 2026-11-29).'),
    cfg.IntOpt('cluster_concurrency', default=0, min=0, max=100000,
               help='Most requests handled at once across the whole '
                    'cluster: each worker process handles at most its '
                    'share, this divided by the live worker processes '
                    '(rounded up, at least 1, at most pool_size), '
                    'resized within watch_period of [coordination] when '
                    'workers come or go. It keeps the workers together '
                    'from pushing Ironic past what it serves well: a '
                    'saturated Ironic spends more CPU on each call. Size '
                    'it to Ironic: for one Ironic process, 2 or 3 '
                    '(doc/guarantees.md I1). 0 (the default) '
                    'sets no cluster limit: each process handles up to '
                    'pool_size.'),
    cfg.BoolOpt('pace_ironic', default=True,
                help='Whether a worker process makes fewer Ironic calls '
                     'at once while Ironic answers slowly (see '
                     'ironic_slowdown; doc/guarantees.md I2). False: its '
                     'tasks make up to pool_size calls at once, as 0.1.0 '
                     'did.'),
    cfg.FloatOpt('ironic_slowdown', default=4.0, min=1.5, max=100.0,
                 help='With pace_ironic, an Ironic answer this many times '
                      'slower than the fastest answer of its kind over the '
                      'last 30 to 60 s lowers the number of Ironic calls '
                      'the worker\'s tasks make at once by a quarter (at '
                      'least one, down to its share of '
                      'least_ironic_calls); fast answers while that '
                      'number is reached raise it by one, up to pool_size. '
                      'A saturated Ironic spends more CPU on each call, so '
                      'this keeps it busy without slowing it.'),
    cfg.IntOpt('least_ironic_calls', default=2, min=1, max=1000,
               help='With pace_ironic, the least number of Ironic calls '
                    'the cluster\'s worker processes together may make '
                    'at once however slowly Ironic answers: no worker\'s '
                    'limit falls below its share, this divided by the '
                    'live worker processes (rounded up, at least 1, at '
                    'most pool_size), resized within watch_period of '
                    '[coordination] when workers come or go (lease_timeout '
                    'when one dies). With one call in flight Ironic waits '
                    'idle from each answer to the next call '
                    '(doc/guarantees.md I2). 1: each worker may go down '
                    'to one call. Above 1, every worker counts the live '
                    'workers, as for cluster_concurrency.'),
    cfg.FloatOpt('queue_get_timeout', default=3.0, min=0.1, max=60.0,
                 help='How long a delivered request waits for a slot of '
                      'this worker\'s share of cluster_concurrency before '
                      'it is put back in the queue; with fake:// how long '
                      'one get from the queue blocks.'),
    cfg.FloatOpt('requeue_delay', default=0.2, min=0.0, max=30.0,
                 help='Pause before a request is put back unconsumed '
                      '(node locked, store unavailable), to avoid spinning.'),
    cfg.IntOpt('max_deliveries', default=20, min=1, max=1000,
               help='A request delivered more often than this without '
                    'success is dead-lettered: closed as "dead" with its '
                    'last failure, and its node, if still waiting on it, '
                    'moved to error with that reason.'),
    cfg.FloatOpt('watch_period', default=1.0, min=0.1, max=60.0,
                 help='How often a worker makes one round trip to the '
                      'database and the broker, so that it stops when '
                      'either is gone for its retry budget even while it '
                      'has nothing to do; not to one that answered its '
                      'work within the period (a transaction committed, a '
                      'message delivered).'),
    cfg.FloatOpt('redrive_after', default=60.0, min=1.0, max=3600.0,
                 help='A request still pending after this many seconds is '
                      'published again (its message may have been lost).'),
    cfg.FloatOpt('redrive_period', default=15.0, min=0.0, max=3600.0,
                 help='How often to look for requests to re-drive; 0 '
                      'disables it.'),
    cfg.FloatOpt('take_over_period', default=1.0, min=0.0, max=3600.0,
                 help='How often the elected member looks for open '
                      'requests held by a member whose coordination lease '
                      'lapsed (dead, frozen or cut off) and publishes them '
                      'again; it also looks at once whenever a member '
                      'leaves. 0 disables it (such requests then wait for '
                      'redrive_after).'),
    cfg.FloatOpt('reboot_throttle', default=0.0, min=0.0, max=86400.0,
                 deprecated_opts=[cfg.DeprecatedOpt('introspection_delay',
                                                    group='DEFAULT')],
                 help='Seconds between power-ons across the cluster; 0 '
                      'disables the throttle. Upstream\'s [DEFAULT] '
                      'introspection_delay (a delay between two '
                      'introspections with managed boot, in one process) '
                      'sets this option.'),
    cfg.PortOpt('health_port', default=0, sample_default=0,
                help='Port of a small HTTP listener serving /healthcheck '
                     '(database, broker, coordination) for a worker '
                     'process; 0 (the default) serves none.'),
    cfg.HostAddressOpt('health_address', default='::',
                       help='Address of the worker health listener.'),
    cfg.FloatOpt('shutdown_timeout', default=60.0, min=0.0, max=3600.0,
                 help='Longest wait for running tasks at shutdown.'),
]
