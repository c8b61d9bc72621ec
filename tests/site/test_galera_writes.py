"""What Galera needs from the service's store (issue 52, item 3): a
commit Galera refuses because another node committed the same row first
(certification failure, MariaDB error 1213) is retried as a whole
transaction, as a lost connection is."""

import threading

import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha.db import api as db_api

import site_members


def _store(url):
    policy = retry.RetryPolicy('database', 3, 0.1, threading.Event(),
                               db_api.RETRYABLE)
    return db_api.Store(url, policy)


def _on_node(site, node, name):
    """A store writing to Galera ``node`` itself, not through HAProxy."""
    return _store('mysql+pymysql://%s:%s@%s:%d/%s' % (
        site_members.USER, site_members.USER, node.address,
        site_members.MYSQL_PORT, name))


def test_a_commit_refused_by_galera_certification_is_retried_whole(site):
    root_url, _ = site.new_database()
    name = sa.engine.make_url(root_url).database
    first, second = (_on_node(site, node, name) for node in site.galera[:2])
    with first.engine.begin() as conn:
        conn.execute(sa.text('CREATE TABLE counter (id INT PRIMARY KEY, '
                             'value INT, writer VARCHAR(8))'))
        conn.execute(sa.text("INSERT INTO counter VALUES (1, 0, 'none')"))
    runs = []

    def add_one_after_the_other_node_wrote(conn):
        runs.append(1)
        conn.execute(sa.text("UPDATE counter SET value = value + 1, "
                             "writer = 'first' WHERE id = 1"))
        if len(runs) == 1:
            # The other node commits the same row first: this commit
            # then fails Galera's certification.
            second.transaction(lambda c: c.execute(sa.text(
                "UPDATE counter SET value = value + 10, writer = 'second' "
                "WHERE id = 1")))

    try:
        first.transaction(add_one_after_the_other_node_wrote)
        row = first.transaction(lambda c: c.execute(sa.text(
            'SELECT value, writer FROM counter WHERE id = 1')).one())
    finally:
        first.dispose()
        second.dispose()
    assert len(runs) == 2, 'the refused transaction was not run again'
    assert tuple(row) == (11, 'first')
