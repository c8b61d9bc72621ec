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
    cfg.StrOpt('keep_ports', default='all',
               choices=[('all', 'keep every port'),
                        ('present', 'keep ports whose MAC the ramdisk '
                                    'reported'),
                        ('added', 'keep only the ports add_ports selects')],
               help='Which Ironic ports of an introspected node to keep; '
                    'the others are deleted (never of an active node).'),
    cfg.BoolOpt('update_pxe_enabled', default=True,
                help='Set pxe_enabled of existing ports to whether the '
                     'node booted from them (with overwrite_existing).'),
    cfg.BoolOpt('permit_active_introspection', default=False,
                help='Introspect nodes that are active or in rescue: they '
                     'may be started, and data from one matching no node '
                     'under introspection is processed; their power and '
                     'ports are left alone.'),
    cfg.StrOpt('ramdisk_logs_dir',
               help='If set, the logs the ramdisk posts are stored in this '
                    'directory, by the API process that receives them.'),
    cfg.BoolOpt('always_store_ramdisk_logs', default=False,
                help='Store the ramdisk logs of every post, not only of '
                     'posts refused with an error (needs '
                     'ramdisk_logs_dir).'),
    cfg.StrOpt('ramdisk_logs_filename_format',
               default='{uuid}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz',
               help='File name template for ramdisk logs: {uuid}, {mac} '
                    '(PXE MAC without colons), {bmc} (BMC address), {dt} '
                    '(UTC datetime of the post).'),
]
