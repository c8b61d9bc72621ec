"""An Ironic database holding a whole site, built once and kept.

One fake-hardware node (enroll) and its ports are created through
Ironic's API; then its rows are copied in SQL, each copy with a new id,
UUID and name, and new port MACs, so every column holds what Ironic
itself wrote. Creating 10,000 nodes through the API would take about
15 minutes of Ironic's one core; copying takes seconds.
"""

import pathlib
import shutil
import sqlite3
import uuid

import testpath  # noqa: F401  (tests/functional on sys.path)
import ironic_server

#: Where site databases are kept between runs.
CACHE = pathlib.Path.home() / '.cache' / 'inspector-ha' / 'benchmarks'


def mac(index):
    """The MAC of the site's ``index``-th port (a prefix no test uses)."""
    return '52:56:%02x:%02x:%02x:%02x' % tuple(
        (index >> shift) & 255 for shift in (24, 16, 8, 0))


def site_database(nodes, ports_per_node, cache=CACHE):
    """Path of the site database (built if not in ``cache``)."""
    path = cache / ('ironic-%d-nodes-%d-ports.sqlite' % (
        nodes, nodes * ports_per_node))
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix('.partial')
        _build(partial, nodes, ports_per_node)
        partial.rename(path)
    return path


def _build(path, nodes, ports_per_node):
    with ironic_server.Ironic() as ironic:
        ironic.create_node(name='site-0', macs=[
            mac(i) for i in range(ports_per_node)],
            provision_state='enroll')
        ironic.stop()
        shutil.copyfile(ironic.database_file, path)
    with sqlite3.connect(path) as db:
        _copy_nodes(db, nodes, ports_per_node)


def _columns(db, table):
    return [row[1] for row in db.execute('PRAGMA table_info(%s)' % table)]


def _copy_rows(db, table, template, rows):
    """Insert a copy of row ``template`` (a dict) per item of ``rows``
    (dicts of the values that differ)."""
    columns = [c for c in _columns(db, table) if c != 'id']
    db.executemany('INSERT INTO %s (%s) VALUES (%s)' % (
        table, ', '.join(columns), ', '.join('?' * len(columns))),
        ([dict(template, **row)[c] for c in columns] for row in rows))


def _template(db, table):
    cursor = db.execute('SELECT * FROM %s ORDER BY id' % table)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _copy_nodes(db, nodes, ports_per_node):
    (node,) = _template(db, 'nodes')
    _copy_rows(db, 'nodes', node, (
        {'uuid': str(uuid.uuid4()), 'name': 'site-%d' % i}
        for i in range(1, nodes)))
    ids = [row[0] for row in db.execute(
        'SELECT id FROM nodes ORDER BY id')]
    ports = _template(db, 'ports')
    _copy_rows(db, 'ports', ports[0], (
        {'uuid': str(uuid.uuid4()), 'node_id': node_id,
         'address': mac(n * ports_per_node + p)}
        for n, node_id in enumerate(ids) if n
        for p in range(ports_per_node)))
