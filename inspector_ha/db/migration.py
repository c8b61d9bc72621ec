"""Schema migrations with alembic (``inspector-ha-dbsync``).

0001-0003 are 0.1.0's linear history. From there two branches grow: the
``expand`` branch (only additions, which the previous release runs on)
and the ``contract`` branch (removals and changes, run once no member of
the previous release is alive). ``upgrade(url)`` runs both (a cold
upgrade); ``upgrade(url, EXPAND)`` or ``CONTRACT`` runs one.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterable
from typing import TYPE_CHECKING

from alembic import command
from alembic import config as alembic_config
from alembic import script as alembic_script

if TYPE_CHECKING:
    import os
    from importlib.resources.abc import Traversable

    #: Where migration scripts are: a directory, as a path or a resource.
    _Scripts = str | os.PathLike[str] | Traversable


#: The top-level ``migrations/`` of the source tree, installed as the
#: package ``inspector_ha.migrations`` (setup.py maps it).
SCRIPTS = importlib.resources.files('inspector_ha.migrations')
EXPAND = 'expand@head'
CONTRACT = 'contract@head'
BRANCHES = ('expand', 'contract')


def _config(url: str,
            scripts: _Scripts | None = None) -> alembic_config.Config:
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', str(scripts or SCRIPTS))
    cfg.set_main_option('sqlalchemy.url', url.replace('%', '%%'))
    return cfg


def upgrade(url: str, revision: str = 'heads',
            scripts: _Scripts | None = None) -> None:
    """Bring the schema to ``revision``; a no-op when already there."""
    command.upgrade(_config(url, scripts), revision)


def downgrade(url: str, revision: str,
              scripts: _Scripts | None = None) -> None:
    command.downgrade(_config(url, scripts), revision)


def script_directory(scripts: _Scripts | None = None
                     ) -> alembic_script.ScriptDirectory:
    return alembic_script.ScriptDirectory.from_config(
        _config('sqlite://', scripts))


def head(scripts: _Scripts | None = None) -> str | None:
    """The newest revisions of the migration scripts, comma-separated
    (one per branch), as :func:`current` reports a database at them."""
    return _join(script_directory(scripts).get_heads())


def branch_head(branch: str, scripts: _Scripts | None = None) -> str:
    """The newest revision of ``branch`` (``expand`` or ``contract``)."""
    return script_directory(scripts).get_revision(branch + '@head').revision


def branch_of(revision: str,
              scripts: _Scripts | None = None) -> str | None:
    """``expand``, ``contract``, or None for 0.1.0's shared history."""
    directory = script_directory(scripts)
    for rev in directory.iterate_revisions(revision, 'base'):
        labels = set(rev.branch_labels or ())
        for branch in BRANCHES:
            if branch in labels:
                return branch
    return None


def pending(url: str, branch: str,
            scripts: _Scripts | None = None) -> list[str]:
    """The revisions of ``branch`` the database at ``url`` lacks, oldest
    first."""
    directory = script_directory(scripts)
    applied: set[str] = set()
    for rev in (current(url) or '').split(','):
        if rev:
            applied.update(r.revision for r in
                           directory.iterate_revisions(rev, 'base'))
    wanted = [r.revision for r in directory.iterate_revisions(
        branch + '@head', 'base')]
    return [r for r in reversed(wanted) if r not in applied]


def at_head(url: str, scripts: _Scripts | None = None) -> bool:
    """Whether both branches of the database at ``url`` are at their
    head."""
    return not any(pending(url, branch, scripts) for branch in BRANCHES)


def current(url: str) -> str | None:
    """The database's revisions, comma-separated; None when it has none."""
    import sqlalchemy as sa
    from alembic.runtime import migration
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return _join(migration.MigrationContext.configure(
                conn).get_current_heads())
    finally:
        engine.dispose()


def _join(revisions: Iterable[str]) -> str | None:
    return ','.join(sorted(revisions)) or None
