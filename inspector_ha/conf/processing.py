"""[processing]: what happens to the data the ramdisk posts."""

from oslo_config import cfg

GROUP = 'processing'

DEFAULT_HOOKS = 'ramdisk_error,root_disk_selection,scheduler,' \
    'validate_interfaces,capabilities,pci_devices'

OPTS = [
    cfg.StrOpt('default_processing_hooks', default=DEFAULT_HOOKS,
               help='Hooks run by default, in order.'),
    cfg.StrOpt('processing_hooks', default='$default_processing_hooks',
               help='Hooks to run, in order.'),
    cfg.StrOpt('store_data', default='none',
               choices=[('none', 'do not store introspection data'),
                        ('database', 'store it in the SQL database')],
               help='Where introspection data is stored.'),
    cfg.StrOpt('add_ports', default='pxe',
               choices=['all', 'active', 'pxe', 'disabled'],
               help='Which interfaces get an Ironic port.'),
    cfg.BoolOpt('overwrite_existing', default=True,
                help='Overwrite node properties that are already set.'),
    cfg.BoolOpt('power_off', default=True,
                help='Power nodes off after introspection.'),
    cfg.BoolOpt('disk_partitioning_spacing', default=True,
                help='Leave 1 GiB for partitioning when computing local_gb.'),
    cfg.StrOpt('node_not_found_hook',
               help='Hook (entry point of inspector_ha.hooks.node_not_found, '
                    'e.g. enroll) run when ramdisk data matches no node '
                    'under introspection; unset, such data is refused.'),
]
