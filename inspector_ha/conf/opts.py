"""The list of all options, for registration and oslo-config-generator."""

from inspector_ha.conf import (coordination, database, default, ironic,
                               processing, queue, worker)

_MODULES = (default, worker, queue, coordination, database, ironic,
            processing)


def list_opts():
    """Return ``[(group, [opts])]`` for every option group."""
    return [(m.GROUP, list(m.OPTS)) for m in _MODULES]
