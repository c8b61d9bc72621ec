"""[pci_devices]: the ``pci_devices`` processing hook."""

from oslo_config import cfg

GROUP = 'pci_devices'

OPTS = [
    cfg.MultiStrOpt('alias', default=[],
                    help='An alias of a PCI device, as JSON with exactly '
                         'the keys vendor_id, product_id and name, e.g. '
                         '{"vendor_id": "8086", "product_id": "1572", '
                         '"name": "x710"}; the node gets the capability '
                         'name:<number of such devices>. Repeat the option '
                         'for more aliases.'),
]
