"""``inspector-ha-status upgrade check`` (oslo.upgradecheck).

Run before and during an upgrade. Exit code as oslo.upgradecheck defines
it: 0 success, 1 warning (something to do, nothing broken), 2 failure
(do not go on), 255 the check itself failed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from inspector_ha.cmd import common
from inspector_ha.cmd import upgrades
from inspector_ha import conf as conf_mod
from inspector_ha.coordination import releases
from inspector_ha.db import online_migrations

Code = upgradecheck.Code
Result = upgradecheck.Result


def _failing_clearly(check: Callable[[Checks], upgradecheck.Result]
                     ) -> Callable[[Checks], upgradecheck.Result]:
    """A check that cannot read what it checks is a failure, named."""
    def wrapped(self: Checks) -> upgradecheck.Result:
        try:
            return check(self)
        except Exception as exc:
            return Result(Code.FAILURE, 'Cannot check: %s'
                          % (str(exc).splitlines() or [repr(exc)])[0])
    return wrapped


class Checks(upgradecheck.UpgradeCommands):
    """Reads SQL and the coordination group; changes nothing."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._conf = conf
        self._versions: dict[str, Any] | None = None

    def _members(self) -> dict[str, Any]:
        if self._versions is None:
            self._versions = upgrades.member_versions(self._conf)
        return self._versions

    def _schema(self) -> upgradecheck.Result:
        url = self._conf.database.connection
        try:
            pending, current = upgrades.schema(url)
        except Exception as exc:
            return Result(Code.FAILURE, 'Cannot read the schema revision '
                          '(%s). Unknown to this release means a newer '
                          'one migrated it.' % exc)
        if current is None:
            return Result(Code.WARNING, 'The database has no schema: run '
                          '"inspector-ha-dbsync upgrade".')
        if pending['expand']:
            return Result(Code.WARNING, 'Expand migrations %s pending: run '
                          '"inspector-ha-dbsync upgrade --expand" before '
                          'starting this release.' % pending['expand'])
        return Result(Code.SUCCESS, 'Schema at the expand head (%s).'
                      % current)

    def _contract(self) -> upgradecheck.Result:
        pending, _ = upgrades.schema(self._conf.database.connection)
        if not pending['contract']:
            return Result(Code.SUCCESS, 'Contract migrations done.')
        older = upgrades.older_members(self._members())
        if older:
            return Result(Code.SUCCESS, 'Contract migrations %s pending; '
                          'they wait for members %s to be upgraded.'
                          % (pending['contract'], sorted(older)))
        return Result(Code.WARNING, 'Contract migrations %s pending: once '
                      'the online data migrations are done, run '
                      '"inspector-ha-dbsync upgrade --contract".'
                      % pending['contract'])

    def _online(self) -> upgradecheck.Result:
        left = online_migrations.remaining(upgrades.store(self._conf))
        if not left:
            return Result(Code.SUCCESS, 'No online data migration left.')
        return Result(Code.WARNING, 'Online data migrations unfinished: %s; '
                      'run "inspector-ha-dbsync online_data_migrations".'
                      % ', '.join('%s (%d rows)' % kv
                                  for kv in sorted(left.items())))

    def _mixed(self) -> upgradecheck.Result:
        try:
            versions = self._members()
        except Exception as exc:
            return Result(Code.FAILURE, 'Cannot read the members from the '
                          'coordination backend: %s' % exc)
        found = sorted({str(v) for v in versions.values()})
        if len(found) > 1:
            return Result(Code.WARNING, 'Members run mixed versions: %s.'
                          % '; '.join('%s: %s' % (m, v) for m, v in
                                      sorted(versions.items())))
        return Result(Code.SUCCESS, 'Members: %d, version %s.'
                      % (len(versions), found[0] if found else 'none'))

    def _pin(self) -> upgradecheck.Result:
        pin = self._conf.pin_release_version
        if not pin:
            return Result(Code.SUCCESS, 'No release pin.')
        if not upgrades.older_members(self._members()):
            return Result(Code.WARNING, 'pin_release_version = %s while '
                          'every member runs %s: unset it and restart the '
                          'members one at a time.' % (pin, releases.CURRENT))
        return Result(Code.SUCCESS, 'pin_release_version = %s.' % pin)

    _upgrade_checks = (
        ('Schema', _failing_clearly(_schema)),
        ('Contract migrations', _failing_clearly(_contract)),
        ('Online data migrations', _failing_clearly(_online)),
        ('Member versions', _failing_clearly(_mixed)),
        ('Release pin', _failing_clearly(_pin)),
    )


def main(argv: list[str]) -> int:
    """``argv`` starts with ``upgrade check``."""
    conf = cfg.CONF
    conf_mod.register_opts(conf)
    return upgradecheck.main(conf, 'inspector-ha', Checks(conf), argv,
                             common._default_files(argv))
