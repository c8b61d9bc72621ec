"""Schema migrations with alembic (``inspector-ha-dbsync``)."""

import pathlib

from alembic import command
from alembic import config as alembic_config

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / 'migrations'


def _config(url):
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', str(SCRIPTS))
    cfg.set_main_option('sqlalchemy.url', url.replace('%', '%%'))
    return cfg


def upgrade(url, revision='head'):
    """Bring the schema to ``revision``; a no-op when already there."""
    command.upgrade(_config(url), revision)


def downgrade(url, revision):
    command.downgrade(_config(url), revision)


def head():
    """The newest revision of the migration scripts."""
    from alembic import script
    return script.ScriptDirectory.from_config(_config('sqlite://')) \
        .get_current_head()


def current(url):
    import sqlalchemy as sa
    from alembic.runtime import migration
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return migration.MigrationContext.configure(
                conn).get_current_revision()
    finally:
        engine.dispose()
