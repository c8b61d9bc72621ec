"""The list of all options, for registration and oslo-config-generator."""

from inspector_ha.conf import (accelerators, auth, capabilities,
                               coordination, database, default, discovery,
                               extra_hardware, ironic, pci_devices, periodic,
                               port_physnet, processing, queue, worker)

_MODULES = (default, auth, worker, queue, coordination, database, ironic,
            processing, periodic, discovery, capabilities, pci_devices,
            port_physnet, extra_hardware, accelerators)


def list_opts():
    """Return ``[(group, [opts])]`` for every option group."""
    return [(m.GROUP, list(m.OPTS)) for m in _MODULES]
