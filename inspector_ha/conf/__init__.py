"""Configuration options, one module per option group.

:func:`register_opts` registers the service's groups on the given
``ConfigOpts``; the service object built in ``cmd/`` passes ``cfg.CONF``
(oslo.messaging registers some of its own options only on the global
object). A plugin's own group is registered when the plugin is loaded,
and for the chosen plugins at start-up (``opts.register_chosen``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_messaging import opts as messaging_opts

from inspector_ha.conf import opts

if TYPE_CHECKING:
    from oslo_config import cfg


def register_opts(conf: cfg.ConfigOpts) -> None:
    for group, options in opts.service_opts():
        conf.register_opts(options, group=group)
    for group, options in messaging_opts.list_opts():
        if group is None:
            conf.register_opts(options)
