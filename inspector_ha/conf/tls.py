"""[ssl]: TLS of the API listener (upstream's names; on with use_ssl)."""

from oslo_config import cfg

GROUP = 'ssl'

OPTS = [
    cfg.StrOpt('cert_file',
               help='Certificate (PEM, may hold the chain) of the API '
                    'when [DEFAULT] use_ssl is true.'),
    cfg.StrOpt('key_file',
               help='Private key (PEM) of the API when [DEFAULT] use_ssl '
                    'is true.'),
]
