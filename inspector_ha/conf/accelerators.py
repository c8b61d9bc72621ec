"""[accelerators]: the ``accelerators`` processing hook."""

import os

from oslo_config import cfg

GROUP = 'accelerators'

KNOWN_DEVICES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    'processing', 'hooks', 'known_accelerators.yaml')

OPTS = [
    cfg.StrOpt('known_devices', default=KNOWN_DEVICES,
               sample_default='<package>/processing/hooks/'
                              'known_accelerators.yaml',
               help='YAML file of the known accelerator devices: a '
                    'pci_devices list of vendor_id, device_id, type and '
                    'device_info.'),
]
