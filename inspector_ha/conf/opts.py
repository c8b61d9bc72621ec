"""The list of all options, for registration and oslo-config-generator."""

from inspector_ha.conf import (accelerators, api, auth, capabilities,
                               coordination, cors, database, default,
                               discovery, dnsmasq_pxe_filter, extra_hardware,
                               healthcheck, ironic, iptables, metrics,
                               nftables, pci_devices, periodic,
                               port_physnet, processing, pxe_filter, queue,
                               tls, worker)

_MODULES = (default, api, tls, auth, worker, queue, coordination, database,
            ironic, processing, periodic, discovery, capabilities, pci_devices,
            port_physnet, extra_hardware, accelerators, pxe_filter,
            iptables, nftables, dnsmasq_pxe_filter, healthcheck, metrics,
            cors)


def list_opts():
    """Return ``[(group, [opts])]`` for every option group."""
    return [(m.GROUP, list(m.OPTS)) for m in _MODULES]
