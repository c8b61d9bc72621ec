"""[queue]: the state-transition request queue (oslo.messaging).

The transport itself is ``[DEFAULT] transport_url``; durability and quorum
queues are oslo.messaging's ``[oslo_messaging_rabbit]`` options
(``rabbit_quorum_queue``, ``amqp_durable_queues``).
"""

from oslo_config import cfg

GROUP = 'queue'

OPTS = [
    cfg.StrOpt('topic', default='inspector_ha.requests',
               help='Topic of the state-transition request queue.'),
    cfg.IntOpt('retry_count', default=5, min=0, max=1000,
               help='Attempts to reach the broker (to publish, or a '
                    'worker\'s probe) before giving up; a worker then '
                    'stops with a non-zero exit.'),
    cfg.FloatOpt('retry_timeout', default=1.0, min=0.0, max=300.0,
                 help='Pause between attempts to reach the broker, in '
                      'seconds.'),
    cfg.FloatOpt('probe_timeout', default=2.0, min=0.1, max=60.0,
                 help='Longest wait for the broker to answer one probe '
                      '(connect, or one round trip).'),
]
