"""[nftables]: the nftables PXE filter driver."""

from oslo_config import cfg

GROUP = 'nftables'

OPTS = [
    cfg.StrOpt('table', default='inspector_ha',
               help='Name of the inet table the driver owns (it deletes '
                    'and rebuilds it).'),
]
