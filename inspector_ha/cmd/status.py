"""``inspector-ha-status``: members, leaders, open requests, nodes.

Prints a table, or JSON with ``--json``. Reads the SQL store and the
coordination backend; changes nothing.
"""

import json
import sys

from oslo_config import cfg
import sqlalchemy as sa

from inspector_ha.cmd import common
from inspector_ha.coordination import membership
from inspector_ha.db import leaders
from inspector_ha.db import models
from inspector_ha import service as service_mod

JSON = cfg.BoolOpt('json', default=False, help='Print JSON.')


def collect(service):
    return {'members': membership.members(service.coordinator.raw),
            'leaders': service.store.transaction(_leaders),
            'open_requests': service.store.transaction(_open_requests),
            'nodes': service.store.transaction(_nodes_per_state)}


def _leaders(session):
    return {row.name: {'holder': row.holder, 'epoch': row.epoch,
                       'elected_at': row.elected_at.isoformat()}
            for row in leaders.all_leaders(session)}


def _open_requests(session):
    table = models.Request
    rows = session.execute(sa.select(table.status, sa.func.count())
                           .where(table.status.in_(['pending', 'applied']))
                           .group_by(table.status)).all()
    return dict(rows)


def _nodes_per_state(session):
    table = models.Node
    return dict(session.execute(sa.select(table.state, sa.func.count())
                                .group_by(table.state)).all())


def render(status):
    lines = ['Members:']
    lines += ['  %s  %s' % (m, c) for m, c in sorted(
        status['members'].items())]
    lines.append('Leaders:')
    lines += ['  %-13s %s (epoch %d since %s)' % (
        n, l['holder'], l['epoch'], l['elected_at'])
        for n, l in status['leaders'].items()]
    lines.append('Open requests: %s' % (status['open_requests'] or 0))
    lines.append('Nodes: %s' % status['nodes'])
    return '\n'.join(lines)


def main(argv=None):
    cfg.CONF.register_cli_opt(JSON)
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    service = service_mod.Service(conf)
    service.coordinator.start()
    try:
        status = collect(service)
    finally:
        service.coordinator.stop()
    print(json.dumps(status, indent=2, sort_keys=True) if conf.json
          else render(status))
    return 0


if __name__ == '__main__':
    sys.exit(main())
