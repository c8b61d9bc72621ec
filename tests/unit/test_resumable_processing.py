"""Processing that resumes instead of failing (doc/guarantees.md D3b) and
ramdisk data accepted while its node is still starting.

A dead worker is played by committing what it had committed before it
died (``worker._save`` with or without a recorded result), then
delivering the request again to a live worker. The changes are empty and
the nodes do not manage boot, so none of these paths calls Ironic.
"""

import pytest

from deliveries import deliver
from deliveries import node as node_of
from deliveries import queue
from deliveries import request as request_of
from inspector_ha.db import conflicts
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.engine import prepared as prepared_mod
from inspector_ha.engine import worker as worker_mod
from inspector_ha.fsm import states as st
from inspector_ha.processing import changes

ACTOR = 'a-worker-that-died'


@pytest.fixture
def worker(service):
    return service.worker()


def _history(service, uuid):
    return [(t.event, t.from_state, t.to_state)
            for t in service.store.transaction(nodes.history, uuid)]


def _die_after_the_processing_commit(service, uuid, request_id, prepared):
    service.store.transaction(
        worker_mod._save, node_of(service, uuid),
        request_of(service, request_id), st.PROCESSING, ACTOR, None,
        prepared)


def test_a_process_request_met_again_sends_the_recorded_changes_and_finishes(
        worker, service, put_node):
    uuid = put_node(st.WAITING, manage_boot=False)
    request_id = queue(service, uuid, st.PROCESS, payload={})
    _die_after_the_processing_commit(
        service, uuid, request_id, prepared_mod.Processed(changes.Changes()))
    assert deliver(worker, service, request_id) is True
    node = node_of(service, uuid)
    assert (node.state, node.error) == (st.FINISHED, None)
    assert request_of(service, request_id).status == ledger.DONE
    assert _history(service, uuid)[-2:] == [
        (st.PROCESS, st.WAITING, st.PROCESSING),
        (st.FINISH, st.PROCESSING, st.FINISHED)]


def test_a_recorded_processing_failure_met_again_ends_with_that_failure(
        worker, service, put_node):
    uuid = put_node(st.WAITING, manage_boot=False)
    request_id = queue(service, uuid, st.PROCESS, payload={})
    _die_after_the_processing_commit(
        service, uuid, request_id,
        prepared_mod.Processed(changes.Changes.failed('rule says no')))
    assert deliver(worker, service, request_id) is True
    node = node_of(service, uuid)
    assert (node.state, node.error) == (st.ERROR, 'rule says no')


def test_a_process_request_met_again_with_nothing_recorded_ends_in_error(
        worker, service, put_node):
    # NOTE: a node that entered processing under a release that recorded
    # nothing: the deja vu rule still refuses to process it twice.
    uuid = put_node(st.WAITING, manage_boot=False)
    request_id = queue(service, uuid, st.PROCESS, payload={})
    _die_after_the_processing_commit(service, uuid, request_id, None)
    assert deliver(worker, service, request_id) is True
    node = node_of(service, uuid)
    assert node.state == st.ERROR
    assert 'delivered again' in node.error


def test_a_result_is_recorded_once_per_attempt(service, put_node):
    uuid = put_node(st.WAITING)
    service.store.transaction(ledger.record_once, uuid, 'x', 1, {'a': 1})
    with pytest.raises(conflicts.StaleWrite):
        service.store.transaction(ledger.record_once, uuid, 'x', 1, {})
    assert service.store.transaction(ledger.recorded, uuid, 'x', 1) == {
        'a': 1}
    assert service.store.transaction(ledger.recorded, uuid, 'x', 2) is None


def test_data_that_came_while_starting_is_acknowledged_uncounted_and_kept(
        worker, service, put_node):
    uuid = put_node(st.STARTING)
    request_id = queue(service, uuid, st.PROCESS, payload={})
    for _ in range(3):
        assert deliver(worker, service, request_id) is True
    row = request_of(service, request_id)
    assert (row.status, row.deliveries) == (ledger.PENDING, 0)
    assert node_of(service, uuid).state == st.STARTING


def test_the_start_that_makes_a_node_wait_applies_its_parked_data_at_once(
        worker, service, put_node, monkeypatch):
    uuid = put_node(st.STARTING, manage_boot=False)
    start_id = queue(service, uuid, st.START, status=ledger.APPLIED)
    parked_id = queue(service, uuid, st.PROCESS, payload={})
    driven = []
    monkeypatch.setattr(worker, '_drive',
                        lambda request_id, locked: driven.append(request_id))
    assert worker._finish(request_of(service, start_id),
                          node_of(service, uuid), st.WAIT, None) is True
    assert node_of(service, uuid).state == st.WAITING
    assert driven == [parked_id]


def test_sending_changes_again_drops_removals_that_are_done():
    node = {'extra': {'kept': 1}, 'properties': {}}
    patch = [{'op': 'remove', 'path': '/extra/block_devices'},
             {'op': 'add', 'path': '/properties/root_device',
              'value': {'serial': 'abc'}},
             {'op': 'remove', 'path': '/extra/kept'}]
    assert changes.applicable(node, patch) == patch[1:]


def test_changes_survive_their_round_trip_through_sql_json():
    original = changes.Changes(
        node_patch=[{'op': 'add', 'path': '/properties/cpus', 'value': '4'}],
        new_ports=[{'address': 'aa:bb:cc:dd:ee:ff', 'pxe_enabled': True}],
        port_patches={'aa:bb:cc:dd:ee:ff': [
            {'op': 'add', 'path': '/physical_network', 'value': 'p'}]},
        traits=[['add', 'CUSTOM_X']], power_off=True)
    assert changes.Changes.from_dict(original.to_dict()) == original


def test_data_whose_start_record_cannot_be_read_is_counted_and_buried(
        worker, service, service_conf, put_node):
    # NOTE: a ports record of another shape (say, another release's): the
    # processing's reads fail on every delivery, which must still count,
    # or the request could never be dead-lettered.
    service_conf.set_override('max_deliveries', 2, group='worker')
    uuid = put_node(st.WAITING, manage_boot=False)
    queue(service, uuid, st.START, payload={'node': {'uuid': uuid}},
          status=ledger.DONE)
    service.store.transaction(
        ledger.add_once, uuid, prepared_mod.PORTS, 1,
        payload={'ports': [['id', 'mac', {}, None, True, 'more', 'yet']]},
        status=ledger.DONE)
    request_id = queue(service, uuid, st.PROCESS, payload={})
    outcomes = [deliver(worker, service, request_id) for _ in range(3)]
    assert outcomes == [False, False, True]
    node = node_of(service, uuid)
    assert node.state == st.ERROR
    assert 'delivered 3 times' in node.error
    assert request_of(service, request_id).status == ledger.DEAD
