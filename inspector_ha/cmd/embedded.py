"""The embedded default: one process, SQLite, tooz file://, fake://.

Used when no configuration file is given at all, for a first run and
small labs. Nothing here is needed to run a cluster.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oslo_config import cfg

DEFAULT_STATE = '~/.local/state/inspector-ha'


def apply(conf: cfg.ConfigOpts) -> None:
    state = os.path.expanduser(os.environ.get('INSPECTOR_HA_STATE',
                                              DEFAULT_STATE))
    os.makedirs(state, exist_ok=True)
    conf.set_default('state_path', state)
    conf.set_default('transport_url', 'fake:/')
    conf.set_default('listen_address', '127.0.0.1')
    conf.set_default('auth_strategy', 'noauth')
    conf.set_default('store_data', 'database', group='processing')
    conf.set_default('auth_type', 'none', group='ironic')
    conf.set_default('endpoint_override',
                     os.environ.get('INSPECTOR_HA_IRONIC_URL',
                                    'http://127.0.0.1:6385'),
                     group='ironic')
