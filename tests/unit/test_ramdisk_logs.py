"""The ramdisk's logs are saved as upstream does: a tar.gz per post in
``ramdisk_logs_dir``, always or only for posts refused with an error;
logs that are not base64 are dropped and the data still processed."""

import base64
import gzip
import io
import json
import logging
import tarfile

import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.db import nodes
from inspector_ha.db import ledger
from inspector_ha.engine import tasks
from inspector_ha.fsm import states as st
from inspector_ha.processing import base
from inspector_ha.processing import ramdisk_logs
from inspector_ha import service as service_mod

MAC = '52:54:00:10:00:01'


def _tar_gz():
    """The same logs blob at every call (gzip's header time fixed at 0,
    not the current second)."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode='wb', mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode='w') as tar:
        body = b'journal line\n'
        info = tarfile.TarInfo('journal')
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return base64.b64encode(out.getvalue()).decode()


def _data(logs, **extra):
    data = {'boot_interface': '01-' + MAC.replace(':', '-'),
            'inventory': {'interfaces': [
                {'name': 'eth0', 'mac_address': MAC,
                 'ipv4_address': '10.0.0.5'}], 'bmc_address': '192.0.2.9'},
            'logs': logs}
    data.update(extra)
    return data


@pytest.fixture
def logged(service_conf, tmp_path):
    def make(**options):
        service_conf.set_override('ramdisk_logs_dir', str(tmp_path / 'logs'),
                                  group='processing')
        for name, value in options.items():
            service_conf.set_override(name, value, group='processing')
        svc = service_mod.Service(service_conf)
        svc.start(workers=False, periodic_jobs=False)
        made.append(svc)
        return svc, app_mod.create_app(svc).test_client()
    made = []
    yield make
    for svc in made:
        svc.shutdown()


def _files(tmp_path):
    directory = tmp_path / 'logs'
    return sorted(directory.iterdir()) if directory.exists() else []


def test_a_refused_post_saves_its_logs_as_a_tar_gz_named_upstreams_way(
        logged, put_node, tmp_path):
    svc, client = logged()
    uuid = put_node(st.WAITING, macs=[MAC])
    response = client.post('/v1/continue',
                           json=_data(_tar_gz(), error='disk on fire'))
    assert response.status_code == 400
    [path] = _files(tmp_path)
    assert path.name.startswith(uuid + '_') and \
        path.name.endswith('.tar.gz')
    with tarfile.open(path) as tar:
        assert tar.extractfile('journal').read() == b'journal line\n'


def test_an_accepted_post_saves_logs_only_when_always_storing(
        logged, put_node, tmp_path):
    svc, client = logged()
    put_node(st.WAITING, macs=[MAC])
    assert client.post('/v1/continue', json=_data(_tar_gz())).status_code \
        == 200
    assert _files(tmp_path) == []


def test_always_store_with_a_custom_format(logged, put_node, tmp_path):
    svc, client = logged(always_store_ramdisk_logs=True,
                         ramdisk_logs_filename_format='{mac}-{bmc}.tgz')
    put_node(st.WAITING, macs=[MAC])
    assert client.post('/v1/continue', json=_data(_tar_gz())).status_code \
        == 200
    assert [p.name for p in _files(tmp_path)] == [
        MAC.replace(':', '') + '-192.0.2.9.tgz']


def test_a_look_up_error_saves_the_logs_under_unknown(logged, tmp_path):
    svc, client = logged()
    assert client.post('/v1/continue', json=_data(_tar_gz())).status_code \
        == 400
    [path] = _files(tmp_path)
    assert path.name.startswith('unknown_')


def test_logs_that_are_not_base64_are_logged_and_the_data_processed(
        logged, put_node, tmp_path, caplog):
    svc, client = logged(always_store_ramdisk_logs=True)
    uuid = put_node(st.WAITING, macs=[MAC])
    with caplog.at_level(logging.ERROR):
        response = client.post('/v1/continue', json=_data('not base64!'))
    assert response.status_code == 200
    assert _files(tmp_path) == []
    assert 'not valid base64' in caplog.text
    [request] = svc.store.transaction(ledger.for_node, uuid)
    assert request.event == st.PROCESS
    assert 'logs' not in ledger.payload(request)


def test_a_processing_failure_the_worker_finds_saves_the_carried_logs(
        logged, put_node, tmp_path, monkeypatch):
    svc, client = logged()
    uuid = put_node(st.WAITING, macs=[MAC])
    # NOTE: one blob: gzip writes the current second into its header.
    logs = _tar_gz()
    assert client.post('/v1/continue', json=_data(logs)).status_code == 200
    assert _files(tmp_path) == []
    [row] = [r for r in svc.store.transaction(ledger.for_node, uuid)
             if r.event == st.PROCESS]
    assert json.loads(row.payload)[ramdisk_logs.KEY] == logs

    def a_hook_fails(*args, **kwargs):
        raise base.HookError('a processing hook says no')
    monkeypatch.setattr(tasks.Tasks, '_changes', a_hook_fails)
    node = svc.store.transaction(nodes.get, uuid)
    prepared = svc.tasks().prepare(st.PROCESS, st.PROCESSING, node, row)
    assert prepared.changes.error == 'a processing hook says no'
    [path] = _files(tmp_path)
    assert path.name.startswith(uuid + '_')


def test_logs_travel_to_the_worker_only_when_there_is_a_directory(
        service_conf, put_node, service):
    client = app_mod.create_app(service).test_client()
    uuid = put_node(st.WAITING, macs=[MAC])
    assert client.post('/v1/continue', json=_data(_tar_gz())).status_code \
        == 200
    [row] = [r for r in service.store.transaction(ledger.for_node, uuid)
             if r.event == st.PROCESS]
    assert ramdisk_logs.KEY not in json.loads(row.payload)
