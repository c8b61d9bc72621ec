"""Thread CPU of one hot statement through ``Connection.execute`` and
through ``inspector_ha.db.prepared`` (the driver's cursor), alone, on a
SQLite file of the service's schema, in one transaction (analysis, not a
test or a benchmark)::

    .venv/bin/python benchmarks/prepared.py [--runs N]
"""

import argparse
import datetime
import pathlib
import tempfile
import time

import sqlalchemy as sa

from inspector_ha.db import migration
from inspector_ha.db import models
from inspector_ha.db import prepared
from inspector_ha.db import statements as sql

UUID = '6c1f4a38-0000-4000-8000-000000000001'
NODE = {'b_uuid': UUID}
MOVE = {'state': 'waiting', 'generation': 2, 'b_uuid': UUID,
        'b_state': 'processing', 'b_generation': 1}
CLOSE = {'status': 'done', 'updated_at': datetime.datetime(2026, 11, 26),
         'b_id': 'r1', 'b_statuses': ('pending', 'applied')}

#: (what, through SQLAlchemy, through prepared.py)
CASES = [
    ('a node read by key, as a model object',
     lambda c: models.detached(models.Node, c.execute(
         sql.NODE, NODE).first()._mapping),
     lambda c: models.detached(models.Node, prepared.first(
         c, sql.NODE, NODE))),
    ('a conditional update of a node (no row matches)',
     lambda c: c.execute(sql.MOVE_NODE, MOVE).rowcount,
     lambda c: prepared.rowcount(c, sql.MOVE_NODE, MOVE)),
    ('an update of a request whose status is IN a list',
     lambda c: c.execute(sql.UPDATE_REQUEST_IN, CLOSE).rowcount,
     lambda c: prepared.rowcount(c, sql.UPDATE_REQUEST_IN, CLOSE)),
]


def per_call_ms(engine, run, runs):
    with engine.begin() as conn:
        run(conn)
        start = time.thread_time()
        for _ in range(runs):
            run(conn)
        return (time.thread_time() - start) / runs * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = 'sqlite:///%s' % (pathlib.Path(tmp) / 'prepared.sqlite')
        migration.upgrade(url)
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            prepared.rowcount(conn, sql.INSERT_NODE, {
                'uuid': UUID, 'state': 'starting', 'generation': 1,
                'attempt': 1, 'started_at': datetime.datetime(2026, 11, 26),
                'manage_boot': True})
        print('| statement | Connection.execute, ms | prepared, ms |')
        print('|---|---|---|')
        for what, through_sqlalchemy, through_driver in CASES:
            print('| %s | %.4f | %.4f |' % (
                what, per_call_ms(engine, through_sqlalchemy, args.runs),
                per_call_ms(engine, through_driver, args.runs)))
        engine.dispose()


if __name__ == '__main__':
    main()
