"""The list of all options, for registration and oslo-config-generator."""

from inspector_ha.conf import (accelerators, auth, capabilities,
                               coordination, database, default, discovery,
                               dnsmasq_pxe_filter, extra_hardware, ironic,
                               iptables, nftables, pci_devices, periodic,
                               port_physnet, processing, pxe_filter, queue,
                               worker)

_MODULES = (default, auth, worker, queue, coordination, database, ironic,
            processing, periodic, discovery, capabilities, pci_devices,
            port_physnet, extra_hardware, accelerators, pxe_filter,
            iptables, nftables, dnsmasq_pxe_filter)


def list_opts():
    """Return ``[(group, [opts])]`` for every option group."""
    return [(m.GROUP, list(m.OPTS)) for m in _MODULES]
