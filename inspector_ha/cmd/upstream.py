"""``inspector-ha-dbsync`` subcommands for a site moving from
ironic-inspector 12.5:

* ``import-ironic-inspector --source URL [--source-config FILE]
  [--dry-run]``: carry its database over (see
  :mod:`inspector_ha.db.upstream_import`); prints counts per table;
* ``check-ironic-inspector-config FILE``: what of an existing
  ``ironic-inspector.conf`` inspector-ha would not use or would refuse
  (see :mod:`inspector_ha.conf.upstream`); exits 1 if it would refuse a
  value.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from inspector_ha.conf import upstream as conf_upstream
from inspector_ha.db import api as db_api
from inspector_ha.db import upstream_import
from inspector_ha.db import upstream_source

if TYPE_CHECKING:
    from oslo_config import cfg

IMPORT = 'import-ironic-inspector'
CHECK = 'check-ironic-inspector-config'
COMMANDS = (IMPORT, CHECK)


def add_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        IMPORT, help='import an ironic-inspector 12.5 database')
    parser.add_argument('--source', required=True,
                        help='SQLAlchemy URL of the ironic-inspector '
                             'database ([database] connection of its '
                             'configuration)')
    parser.add_argument('--source-config', default=None,
                        help='ironic-inspector.conf of the source, to '
                             'detect data stored in Swift')
    parser.add_argument('--dry-run', action='store_true',
                        help='print what would be imported; write nothing')
    parser = subparsers.add_parser(
        CHECK, help='check an ironic-inspector.conf before the switch')
    parser.add_argument('file', help='the ironic-inspector.conf to check')


def run(conf: cfg.ConfigOpts) -> int | None:
    """Run the subcommand in ``conf.command`` if it is one of these and
    return its exit code; refuse (1) any command but the check on a
    target that is a 12.5 database; else None."""
    if conf.command.name == CHECK:
        return _check(conf, conf.command.file)
    if _is_upstream(conf.database.connection):
        print('ERROR: %s is an ironic-inspector %s database (revision %s), '
              'not inspector-ha\'s: give inspector-ha a database of its own '
              'and import this one with `inspector-ha-dbsync %s --source '
              'URL`' % (upstream_source.safe_url(conf.database.connection),
                        '12.5', upstream_source.REVISION, IMPORT))
        return 1
    if conf.command.name == IMPORT:
        return _import(conf)
    return None


def _is_upstream(url: str) -> bool:
    try:
        source = upstream_source.Source(url)
    except upstream_source.WrongSource:
        return False
    try:
        source.check_revision()
        return True
    except Exception:  # noqa - anything else is for the command to report
        return False
    finally:
        source.close()


def _import(conf: cfg.ConfigOpts) -> int:
    command = conf.command
    store_data = None
    if command.source_config:
        store_data = conf_upstream.raw_value(
            command.source_config, 'processing', 'store_data')
    store = db_api.Store(conf.database.connection, db_api.retry_policy(
        conf.database, threading.Event()))
    try:
        report = upstream_import.run(
            command.source, store, dry_run=command.dry_run,
            source_store_data=store_data,
            data_expiry=_data_expiry(conf))
    except (upstream_source.WrongSource,
            upstream_import.TargetNotReady) as exc:
        print('ERROR: %s' % exc)
        return 1
    finally:
        store.dispose()
    print('\n'.join(report.lines()))
    return 0


def _data_expiry(conf: cfg.ConfigOpts) -> float | None:
    if not conf.periodic.data_cleanup_period:
        return None
    return conf.periodic.data_expiry


def _check(conf: cfg.ConfigOpts, path: str) -> int:
    findings = conf_upstream.check_file(conf, path)
    print('\n'.join(findings.lines()))
    return 1 if findings.refused else 0
