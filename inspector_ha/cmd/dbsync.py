"""``inspector-ha-dbsync``: create or upgrade the schema.

``upgrade --expand`` adds what the new release needs (the previous one
runs on the result), ``upgrade --contract`` removes what only the
previous one needed (refused while a member of it is alive or an online
data migration is unfinished), plain ``upgrade`` does both (a cold
upgrade, or a new database). ``online_data_migrations`` moves data
between old and new places in batches; it exits 1 while rows are left
(with ``--max-count``), 0 when done. ``export-to-ironic`` converts
the introspection rules into Ironic's (:mod:`inspector_ha.cmd.export`).
"""

from __future__ import annotations

import sys
from typing import Any

from oslo_config import cfg

from inspector_ha.cmd import common
from inspector_ha.cmd import export
from inspector_ha.cmd import upgrades
from inspector_ha.cmd import upstream
from inspector_ha.db import migration
from inspector_ha.db import online_migrations


def _add_commands(subparsers: Any) -> None:
    upgrade = subparsers.add_parser('upgrade', help='upgrade the schema')
    upgrade.add_argument('--revision', default=None)
    branch = upgrade.add_mutually_exclusive_group()
    branch.add_argument('--expand', action='store_true',
                        help='only the additive migrations')
    branch.add_argument('--contract', action='store_true',
                        help='only the removing migrations')
    subparsers.add_parser('version', help='print the schema revision')
    online = subparsers.add_parser(
        'online_data_migrations', help='move data between old and new '
        'columns, in batches, while the service runs')
    online.add_argument('--max-count', type=int, default=None,
                        help='move at most this many rows')
    upstream.add_commands(subparsers)
    export.add_commands(subparsers)


COMMAND = cfg.SubCommandOpt('command', title='Command',
                            handler=_add_commands)


def _upgrade(conf: cfg.ConfigOpts, url: str) -> int:
    command = conf.command
    if command.revision:
        migration.upgrade(url, command.revision)
        return 0
    if not command.expand and migration.current(url) is not None \
            and migration.pending(url, 'contract'):
        blockers = upgrades.contract_blockers(conf, upgrades.store(conf))
        if blockers:
            print('Refusing to contract the schema:\n  %s'
                  % '\n  '.join(blockers), file=sys.stderr)
            return 2
    migration.upgrade(url, migration.EXPAND if command.expand else
                      migration.CONTRACT if command.contract else 'heads')
    return 0


def _online(conf: cfg.ConfigOpts) -> int:
    if conf.command.max_count is not None and conf.command.max_count < 1:
        print('--max-count must be at least 1', file=sys.stderr)
        return 127
    summary = online_migrations.run(upgrades.store(conf),
                                    conf.command.max_count)
    for name, (moved, left) in summary.items():
        print('%-40s moved %d, left %d' % (name, moved, left))
    if not summary:
        print('No online data migrations in this release.')
    return 1 if any(left for _, left in summary.values()) else 0


def main(argv: list[str] | None = None) -> int:
    cfg.CONF.register_cli_opt(COMMAND)
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    refusal = upstream.run(conf)
    if refusal is not None:
        return refusal
    url = conf.database.connection
    if conf.command.name == export.EXPORT:
        return export.run(conf)
    if conf.command.name == 'online_data_migrations':
        return _online(conf)
    if conf.command.name == 'upgrade':
        code = _upgrade(conf, url)
        if code:
            return code
    print(migration.current(url))
    return 0


if __name__ == '__main__':
    sys.exit(main())
