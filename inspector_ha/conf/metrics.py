"""[metrics]: the Prometheus ``/metrics`` endpoint of each process."""

from oslo_config import cfg

GROUP = 'metrics'

OPTS = [
    cfg.BoolOpt('enabled', default=True,
                help='Serve Prometheus metrics at /metrics: API processes '
                     'on their API port (without authentication, like '
                     '/healthcheck), workers on [metrics] port.'),
    cfg.PortOpt('port', default=0,
                help='Port a worker process serves /metrics on; 0: none. '
                     'Each worker of a host needs its own.'),
    cfg.HostAddressOpt('host', sample_default='<listen_address>',
                       help='Address a worker serves /metrics on; '
                            '[DEFAULT] listen_address if unset.'),
]
