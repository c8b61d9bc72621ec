"""accelerators: known accelerator PCI devices as ``properties/accelerators``.

The known devices are read once, when the hook is loaded, from the YAML
file ``[accelerators] known_devices`` (a ``pci_devices`` list of
``vendor_id``, ``device_id``, ``type``, ``device_info``); a missing or
malformed file stops the hook from loading.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import yaml
from oslo_config import cfg

from inspector_ha.processing import base

LOG = logging.getLogger(__name__)

GROUP = 'accelerators'

KNOWN_DEVICES = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), 'known_accelerators.yaml')

OPTS = [
    cfg.StrOpt('known_devices', default=KNOWN_DEVICES,
               sample_default='<package>/processing/hooks/'
                              'known_accelerators.yaml',
               help='YAML file of the known accelerator devices: a '
                    'pci_devices list of vendor_id, device_id, type and '
                    'device_info.'),
]


class AcceleratorsHook(base.ProcessingHook):
    OPTIONS = [(GROUP, OPTS)]

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf)
        # NOTE: Any keys: looked up with None too (see _key).
        self.known: dict[Any, dict[str, Any]] = load_known_devices(
            conf.accelerators.known_devices)

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        devices = data.get('pci_devices')
        if not devices or not isinstance(devices, list):
            LOG.warning('Unable to distinguish accelerator devices due to no '
                        'PCI devices information was received from the '
                        'ramdisk.')
            return
        found = []
        for device in devices:
            known = self.known.get(_key(device))
            if known:
                found.append(dict(known, pci_address=device.get('bus')))
        if found:
            LOG.info('Found the following accelerator devices: %s', found)
            node.set_property('accelerators', found)


def load_known_devices(path: str
                       ) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(vendor_id, device_id): device}`` from the YAML file.

    :raises RuntimeError: the file is missing or malformed.
    """
    try:
        with open(path) as stream:
            document = yaml.safe_load(stream)
    except (OSError, yaml.YAMLError) as exc:
        raise RuntimeError('Cannot read known accelerators from %s: %s' %
                           (path, exc)) from None
    devices = document.get('pci_devices') if isinstance(document,
                                                         dict) else None
    if not isinstance(devices, list) or not all(
            isinstance(d, dict) and d.get('vendor_id') and d.get('device_id')
            for d in devices):
        raise RuntimeError('%s must have a pci_devices list of devices, '
                           'each with vendor_id and device_id' % path)
    return {(str(d['vendor_id']), str(d['device_id'])): d for d in devices}


def _key(device: object) -> tuple[str, str] | None:
    if not isinstance(device, dict):
        return None
    return str(device.get('vendor_id')), str(device.get('product_id'))
