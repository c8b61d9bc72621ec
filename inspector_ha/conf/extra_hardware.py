"""[extra_hardware]: the ``extra_hardware`` processing hook."""

from oslo_config import cfg

GROUP = 'extra_hardware'

OPTS = [
    cfg.BoolOpt('strict', default=False,
                help='Refuse to convert the extra hardware data when a '
                     'record is not a 4-item list, and drop the data '
                     'even when it cannot be converted.'),
]
