"""The rule of expand migrations, checked on a real database: walk every
revision of the expand branch and compare the schema before and after.

An expand migration may add tables, nullable (or server-defaulted)
columns, indexes and constraints. It may not drop or rename a table, a
column, an index or a constraint, change a column's type, or make a
column NOT NULL: the previous release runs on its result.
"""

import sqlalchemy as sa

from inspector_ha.db import migration


def snapshot(url):
    """``{table: {'columns': {name: (type, nullable)}, 'indexes': set,
    'constraints': set}}`` of the database at ``url``."""
    engine = sa.create_engine(url)
    try:
        inspector = sa.inspect(engine)
        result = {}
        for table in inspector.get_table_names():
            if table == 'alembic_version':
                continue
            columns = {c['name']: (_type(c['type'], engine), c['nullable'],
                                   c.get('default') is not None)
                       for c in inspector.get_columns(table)}
            constraints = {('fk', tuple(fk['constrained_columns']),
                            fk['referred_table'])
                           for fk in inspector.get_foreign_keys(table)}
            constraints |= {('unique', tuple(u['column_names']))
                            for u in inspector.get_unique_constraints(table)}
            indexes = {(i['name'], tuple(i['column_names']))
                       for i in inspector.get_indexes(table)}
            result[table] = {'columns': columns, 'indexes': indexes,
                             'constraints': constraints}
        return result
    finally:
        engine.dispose()


def _type(column_type, engine):
    return column_type.compile(dialect=engine.dialect)


def compare(before, after):
    """The destructive differences from ``before`` to ``after``."""
    found = []
    for table, old in sorted(before.items()):
        new = after.get(table)
        if new is None:
            found.append('table %s dropped or renamed' % table)
            continue
        for name, (kind, nullable, _) in sorted(old['columns'].items()):
            if name not in new['columns']:
                found.append('column %s.%s dropped or renamed'
                             % (table, name))
                continue
            new_kind, new_nullable, _ = new['columns'][name]
            if new_kind != kind:
                found.append('column %s.%s changed type %s -> %s'
                             % (table, name, kind, new_kind))
            if nullable and not new_nullable:
                found.append('column %s.%s made NOT NULL' % (table, name))
        for name, (_, nullable, default) in sorted(new['columns'].items()):
            if name not in old['columns'] and not (nullable or default):
                found.append('column %s.%s added NOT NULL without a '
                             'server default' % (table, name))
        for key in ('indexes', 'constraints'):
            for item in sorted(old[key] - new[key], key=str):
                found.append('%s %s of %s dropped or renamed'
                             % (key[:-1], item, table))
    return found


def expand_violations(url, scripts=None):
    """Walk the expand branch revision by revision on ``url`` (an empty
    database, brought to 0.1.0's schema first); ``[(revision, problem)]``
    of every destructive operation found."""
    directory = migration.script_directory(scripts)
    revisions = [r for r in reversed(list(directory.iterate_revisions(
        migration.EXPAND, 'base')))]
    found = []
    for rev in revisions:
        if rev.down_revision is None:
            migration.upgrade(url, rev.revision, scripts)
            continue
        if migration.branch_of(rev.revision, scripts) != 'expand':
            migration.upgrade(url, rev.revision, scripts)
            continue
        before = snapshot(url)
        migration.upgrade(url, rev.revision, scripts)
        found += [(rev.revision, p) for p in compare(before,
                                                     snapshot(url))]
    return found
