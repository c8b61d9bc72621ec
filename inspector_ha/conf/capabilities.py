"""[capabilities]: the ``capabilities`` processing hook."""

from oslo_config import cfg

GROUP = 'capabilities'

DEFAULT_CPU_FLAGS = {'vmx': 'cpu_vt', 'svm': 'cpu_vt', 'aes': 'cpu_aes',
                     'pse': 'cpu_hugepages', 'pdpe1gb': 'cpu_hugepages_1g',
                     'smx': 'cpu_txt'}

OPTS = [
    cfg.BoolOpt('boot_mode', default=False,
                help='Whether to set the boot_mode capability (bios or '
                     'uefi) from the ramdisk\'s current boot mode.'),
    cfg.DictOpt('cpu_flags', default=DEFAULT_CPU_FLAGS,
                help='CPU flag to capability map: a capability is set to '
                     '"true" when the CPU has the flag.'),
]
