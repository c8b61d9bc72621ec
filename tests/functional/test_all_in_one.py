"""The all-in-one ``inspector-ha`` with no configuration at all: the
embedded default (SQLite file, tooz file://, in-process messaging)."""

import signal

import batch
import embedded

NODES = 20


def test_the_embedded_default_takes_nodes_from_start_to_finished(
        tmp_path, ironic):
    proc, url = embedded.start(tmp_path, ironic.url)
    try:
        nodes = batch.create_nodes(ironic, NODES)
        states = batch.introspect(ironic, [url], nodes, 120)
        assert {s['state'] for s in states.values()} == {'finished'}
        batch.assert_ironic_was_updated(ironic, list(nodes)[:5])
        assert (tmp_path / 'state' / 'inspector-ha.sqlite').exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
