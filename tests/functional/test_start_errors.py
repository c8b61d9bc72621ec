"""Starting introspection: the errors upstream clients expect, checked
against a real Ironic through the all-in-one process."""

import uuid as uuidlib

import pytest
import requests

import backends
import embedded


@pytest.fixture(scope='module')
def service(tmp_path_factory, ironic):
    # A long reboot throttle keeps a started node in "starting" for a while.
    proc, url = embedded.start(tmp_path_factory.mktemp('aio'), ironic.url,
                               OS_WORKER__REBOOT_THROTTLE='5')
    yield url
    proc.terminate()
    proc.wait(30)


def _start(url, node, query=''):
    return requests.post('%s/v1/introspection/%s%s' % (url, node, query),
                         timeout=30)


def _message(resp):
    assert resp.headers['Content-Type'] == 'application/json'
    assert resp.headers[
        'X-OpenStack-Ironic-Inspector-API-Maximum-Version'] == '1.18'
    return resp.json()['error']['message']


def test_starting_a_node_ironic_does_not_know_answers_404(service):
    resp = _start(service, uuidlib.uuid4())
    assert resp.status_code == 404
    assert 'not found' in _message(resp)


def test_starting_a_node_in_a_provision_state_that_forbids_it_is_400(
        service, ironic):
    uuid = ironic.create_node(provision_state='available')
    resp = _start(service, uuid)
    assert resp.status_code == 400
    assert 'provision state "available"' in _message(resp)


def test_a_malformed_manage_boot_value_is_400(service, ironic):
    uuid = ironic.create_node(macs=['52:54:00:aa:00:01'])
    resp = _start(service, uuid, '?manage_boot=perhaps')
    assert resp.status_code == 400
    assert 'manage_boot' in _message(resp)


def test_a_second_start_while_starting_is_refused_and_changes_nothing(
        service, ironic):
    uuid = ironic.create_node(name='n-%s' % uuidlib.uuid4().hex[:8],
                              macs=['52:54:00:aa:00:02'])
    assert _start(service, uuid).status_code == 202
    first = requests.get('%s/v1/introspection/%s' % (service, uuid)).json()
    assert first['state'] == 'starting'
    resp = _start(service, uuid)
    assert resp.status_code == 400
    assert 'starting' in _message(resp)
    again = requests.get('%s/v1/introspection/%s' % (service, uuid)).json()
    assert again['started_at'] == first['started_at']
    backends.wait_for(lambda: requests.get('%s/v1/introspection/%s' % (
        service, uuid)).json()['state'] == 'waiting', 30)


def test_a_node_can_be_started_by_name(service, ironic):
    name = 'byname-%s' % uuidlib.uuid4().hex[:8]
    uuid = ironic.create_node(name=name, macs=['52:54:00:aa:00:03'])
    assert _start(service, name).status_code == 202
    status = requests.get('%s/v1/introspection/%s' % (service, name))
    assert status.status_code == 200
    assert status.json()['uuid'] == uuid
