"""[queue]: the state-transition request queue (oslo.messaging).

The transport itself is ``[DEFAULT] transport_url``; durability and quorum
queues are oslo.messaging's ``[oslo_messaging_rabbit]`` options
(``rabbit_quorum_queue``, ``amqp_durable_queues``).
"""

from oslo_config import cfg

from inspector_ha.conf import retry

GROUP = 'queue'

OPTS = [
    cfg.StrOpt('topic', default='inspector_ha.requests',
               help='Topic of the state-transition request queue.'),
    cfg.FloatOpt('probe_timeout', default=2.0, min=0.1, max=60.0,
                 help='Longest wait for the broker to answer one probe '
                      '(connect, or one round trip).'),
] + retry.retry_opts(
    'Attempts to reach the broker (to publish, or a worker\'s probe) '
    'before giving up; a worker then stops with a non-zero exit.',
    'Pause between attempts to reach the broker, in seconds.')
