"""``inspector-ha-status``: members, leaders, open requests, nodes.
``inspector-ha-status upgrade check``: see :mod:`upgradecheck`.

Prints a table, or JSON with ``--json``; ``--watch`` refreshes a live
view (:mod:`inspector_ha.cmd.watch`). Reads the SQL store and the
coordination backend; changes nothing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from oslo_config import cfg
import sqlalchemy as sa

from inspector_ha.cmd import common
from inspector_ha.cmd import watch as watch_mod
from inspector_ha.coordination import membership
from inspector_ha.db import leaders
from inspector_ha.db import models
from inspector_ha import service as service_mod

JSON = cfg.BoolOpt('json', default=False, help='Print JSON.')
CLI_OPTS = [
    JSON,
    cfg.BoolOpt('watch', default=False,
                help='Refresh a live view every --interval seconds until '
                     'interrupted: in place on a terminal, one line per '
                     'refresh when piped (one JSON object with --json).'),
    cfg.FloatOpt('interval', default=2.0, min=0.1, max=3600.0,
                 help='Seconds between refreshes of --watch.'),
    cfg.IntOpt('iterations', default=0, min=0,
               help='Stop --watch after this many refreshes; 0: never.'),
]


def collect(service: service_mod.Service) -> dict[str, Any]:
    return {'members': membership.members(service.coordinator),
            'leaders': service.store.transaction(_leaders),
            'open_requests': service.store.transaction(_open_requests),
            'nodes': service.store.transaction(_nodes_per_state)}


def collect_progress(service: service_mod.Service) -> dict[str, Any]:
    """:func:`collect` plus :func:`watch.progress`."""
    return dict(collect(service),
                **service.store.transaction(watch_mod.progress))


def _leaders(conn: sa.Connection) -> dict[str, dict[str, Any]]:
    return {row.name: {'holder': row.holder, 'epoch': row.epoch,
                       'elected_at': row.elected_at.isoformat()}
            for row in leaders.all_leaders(conn)}


def _open_requests(conn: sa.Connection) -> dict[str, int]:
    table = models.Request
    rows = conn.execute(sa.select(table.status, sa.func.count())
                           .where(table.status.in_(['pending', 'applied']))
                           .group_by(table.status)).all()
    return dict(rows)


def _nodes_per_state(conn: sa.Connection) -> dict[str, int]:
    table = models.Node
    return dict(conn.execute(sa.select(table.state, sa.func.count())
                                .group_by(table.state)).all())


def render(status: Mapping[str, Any]) -> str:
    lines = ['Members:']
    lines += ['  %s  %s' % (m, c) for m, c in sorted(
        status['members'].items())]
    lines.append('Leaders:')
    lines += ['  %-13s %s (epoch %d since %s)' % (
        n, leader['holder'], leader['epoch'], leader['elected_at'])
        for n, leader in status['leaders'].items()]
    lines.append('Open requests: %s' % (status['open_requests'] or 0))
    lines.append('Nodes: %s' % status['nodes'])
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if ['upgrade', 'check'] in (argv[i:i + 2] for i in range(len(argv))):
        from inspector_ha.cmd import upgradecheck
        return upgradecheck.main(argv)
    cfg.CONF.register_cli_opts(CLI_OPTS)
    conf = common.load_config(argv)
    service = service_mod.Service(conf)
    service.coordinator.start()
    try:
        if conf.watch:
            watch_mod.watch(lambda: collect_progress(service),
                            conf.interval, conf.iterations, conf.json)
            return 0
        status = collect(service)
    finally:
        service.coordinator.stop()
    print(json.dumps(status, indent=2, sort_keys=True) if conf.json
          else render(status))
    return 0


if __name__ == '__main__':
    sys.exit(main())
