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
               help='Attempts to publish before giving up.'),
    cfg.FloatOpt('retry_timeout', default=1.0, min=0.0, max=300.0,
                 help='Pause between publish attempts, in seconds.'),
]
