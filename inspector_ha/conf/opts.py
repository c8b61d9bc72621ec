"""The list of all options, for registration and oslo-config-generator.

The service's own groups are modules here; a plugin's own group (a PXE
filter driver's ``[iptables]``, ``[nftables]``, ``[dnsmasq_pxe_filter]``,
a hook's ``[capabilities]`` or ``[discovery]``) lives with the plugin and
is found through its entry point (:mod:`inspector_ha.conf.plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector_ha.conf import (api, auth, coordination, cors, database,
                               default, healthcheck, ironic, metrics,
                               periodic, plugins, processing, pxe_filter,
                               queue, tls, worker)

if TYPE_CHECKING:
    from oslo_config import cfg

_MODULES = (default, api, tls, auth, worker, queue, coordination, database,
            ironic, processing, periodic, pxe_filter, healthcheck, metrics,
            cors)


def service_opts() -> list[tuple[str | None, list[cfg.Opt]]]:
    """``[(group, [opts])]`` of the service's own groups (registered on
    every ``ConfigOpts`` by :func:`inspector_ha.conf.register_opts`)."""
    return [(m.GROUP, list(m.OPTS)) for m in _MODULES]


def list_opts() -> list[tuple[str | None, list[cfg.Opt]]]:
    """``[(group, [opts])]`` of every option group: the service's, then
    each installed plugin's own (oslo-config-generator's namespace
    ``inspector-ha``; the check of an ironic-inspector file)."""
    return service_opts() + plugins.list_opts()


def register_chosen(
        conf: cfg.ConfigOpts) -> list[tuple[str | None, list[cfg.Opt]]]:
    """Check the options naming a plugin and register the chosen
    plugins' own options on ``conf``; return ``[(group, [opts])]`` of
    every option of ours ``conf`` has, to read them all. ValueError (one
    line naming the option) if a chosen plugin is not installed."""
    return service_opts() + plugins.register_chosen(conf)
