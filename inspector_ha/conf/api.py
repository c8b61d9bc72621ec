"""[api]: the HTTP server of API processes (cheroot) and its graceful stop."""

from oslo_config import cfg

GROUP = 'api'

OPTS = [
    cfg.IntOpt('threads', default=32, min=1, max=1024,
               help='Threads of the HTTP server, the most requests one '
                    'API process serves at once.'),
    cfg.IntOpt('backlog', default=1024, min=1, max=65535,
               help='Listen backlog of the API socket.'),
    cfg.FloatOpt('drain_time', default=10.0, min=0.0, max=600.0,
                 help='After SIGTERM, seconds during which /healthcheck '
                      'answers 503 while requests are still served, so a '
                      'load balancer stops sending new ones (longer than '
                      'its fall x inter: 3 x 2 s in the shipped HAProxy '
                      'file). Then the listener closes.'),
    cfg.FloatOpt('shutdown_timeout', default=30.0, min=0.0, max=3600.0,
                 help='Longest wait for the requests in flight once the '
                      'listener is closed.'),
]
