"""Alembic environment: the URL comes from the caller's Config."""

from alembic import context
import sqlalchemy as sa

from inspector_ha.db import models


def run_migrations_online():
    config = context.config
    connectable = config.attributes.get('connection')
    if connectable is not None:
        _run(connectable)
        return
    engine = sa.create_engine(config.get_main_option('sqlalchemy.url'))
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


def _run(connection):
    context.configure(connection=connection,
                      target_metadata=models.Base.metadata,
                      render_as_batch=connection.dialect.name == 'sqlite')
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
