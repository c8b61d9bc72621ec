"""What the upgrade commands read: member releases, schema branches and
online data migrations (``inspector-ha-dbsync``, ``inspector-ha-status
upgrade check``). Reads only."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tooz import coordination as tooz_coordination

from inspector_ha.coordination import releases
from inspector_ha.coordination import tooz_backend
from inspector_ha.db import api as db_api
from inspector_ha.db import migration
from inspector_ha.db import online_migrations

if TYPE_CHECKING:
    from oslo_config import cfg


def store(conf: cfg.ConfigOpts) -> db_api.Store:
    stop = threading.Event()
    return db_api.Store(conf.database.connection,
                        db_api.retry_policy(conf.database, stop),
                        pool=db_api.Pool(size=1, overflow=1))


def member_versions(conf: cfg.ConfigOpts) -> dict[str, Any]:
    """``{member: announced version}`` of the live members (the command
    joins no group: it only reads it)."""
    coordinator = tooz_backend.Coordinator(
        conf.coordination.backend_url,
        'upgrade-check-%s' % uuid.uuid4().hex[:8],
        tooz_backend.retry_policy(conf.coordination, threading.Event()),
        conf.coordination.lease_timeout)
    coordinator.start()
    try:
        return coordinator.call(releases.member_versions, coordinator)
    except tooz_coordination.GroupNotCreated:
        return {}
    finally:
        coordinator.stop()


def older_members(versions: Mapping[str, Any]) -> dict[str, Any]:
    """The members of ``versions`` of a release older than this one."""
    return {member: version for member, version in versions.items()
            if releases.release_of(version) != releases.CURRENT}


def contract_blockers(conf: cfg.ConfigOpts,
                      the_store: db_api.Store) -> list[str]:
    """Why ``upgrade --contract`` must not run now (empty: it may)."""
    reasons: list[str] = []
    for name, left in sorted(
            online_migrations.remaining(the_store).items()):
        reasons.append('online data migration %s has %d rows left: run '
                       '"inspector-ha-dbsync online_data_migrations"'
                       % (name, left))
    try:
        older = older_members(member_versions(conf))
    except Exception as exc:
        reasons.append('cannot read the members from the coordination '
                       'backend (%s): no member of the previous release '
                       'may be alive' % exc)
    else:
        for member, version in sorted(older.items()):
            reasons.append('member %s of version %s is alive: upgrade it '
                           'first' % (member, version))
    return reasons


def schema(url: str) -> tuple[dict[str, list[str]], str | None]:
    """``{branch: pending revisions}`` and the current revisions."""
    return ({branch: migration.pending(url, branch)
             for branch in migration.BRANCHES}, migration.current(url))
