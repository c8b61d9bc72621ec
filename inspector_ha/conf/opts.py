"""The list of all options, for registration and oslo-config-generator."""

from inspector_ha.conf import (auth, coordination, database, default,
                               ironic, periodic, processing, queue,
                               worker)

_MODULES = (default, auth, worker, queue, coordination, database, ironic,
            processing, periodic)


def list_opts():
    """Return ``[(group, [opts])]`` for every option group."""
    return [(m.GROUP, list(m.OPTS)) for m in _MODULES]
