"""``inspector-ha-dbsync upgrade``: create or upgrade the schema."""

import sys

from oslo_config import cfg

from inspector_ha.cmd import common
from inspector_ha.db import migration


def _add_commands(subparsers):
    upgrade = subparsers.add_parser('upgrade', help='upgrade the schema')
    upgrade.add_argument('--revision', default='head')
    subparsers.add_parser('version', help='print the schema revision')


COMMAND = cfg.SubCommandOpt('command', title='Command',
                            handler=_add_commands)


def main(argv=None):
    cfg.CONF.register_cli_opt(COMMAND)
    conf = common.load_config(sys.argv[1:] if argv is None else argv)
    url = conf.database.connection
    if conf.command.name == 'upgrade':
        migration.upgrade(url, conf.command.revision)
    print(migration.current(url))
    return 0


if __name__ == '__main__':
    sys.exit(main())
