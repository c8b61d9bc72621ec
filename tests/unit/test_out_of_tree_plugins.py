"""Plugins of another package: a PXE filter driver and a processing hook,
each one module and an entry point in ``tests/plugins/out_of_tree``
(installed in the test venv by ``tools/install-test-deps.sh``); nothing
in inspector_ha names them. These tests fail, not skip, without it."""

import importlib.metadata
import json
import subprocess
import sys

import pytest

from inspector_ha.conf import opts
from inspector_ha.firewall import base
from inspector_ha.processing import pipeline
import conffiles
import hooktools

PACKAGE = 'inspector-ha-out-of-tree-example'
PXE, WHITE, BLACK = ('52:54:00:0c:00:01', '52:54:00:0c:00:02',
                     '52:54:00:0c:00:03')


@pytest.fixture(autouse=True)
def installed():
    try:
        importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        pytest.fail('%s (tests/plugins/out_of_tree) is not installed: run '
                    'tools/install-test-deps.sh' % PACKAGE, pytrace=False)


def _conf(tmp_path, text):
    """A ``ConfigOpts`` read from a file holding ``text``, as a process
    reads it at start-up (the chosen plugins' own options registered)."""
    return conffiles.read(tmp_path, text)


def test_an_out_of_tree_pxe_filter_driver_is_loaded_and_reads_its_options(
        tmp_path):
    state_file = tmp_path / 'filter.json'
    conf, path = _conf(tmp_path, '[pxe_filter]\ndriver = example_file\n'
                                 'dnsmasq_interface = pxe0\n'
                                 'ip_version = 6\n'
                                 '[example_pxe_filter]\n'
                                 'state_file = %s\n' % state_file)
    assert 'example_pxe_filter' in {g for g, _ in opts.list_opts()}
    assert 'example_pxe_filter' not in conf  # until the driver is loaded
    driver = base.load(conf)
    assert type(driver).__module__ == 'example_file_filter'
    driver.init()
    assert json.loads(state_file.read_text()) == {
        'interface': 'pxe0', 'dhcp_ports': [67, 547], 'open': False,
        'open_for': None, 'whitelist': [], 'blacklist': [],
        'deny_unknown': False}
    driver.apply(base.State(2.0, frozenset([WHITE]),
                            frozenset([BLACK, 'not a MAC']), True))
    applied = json.loads(state_file.read_text())
    assert (applied['open'], applied['open_for'], applied['whitelist'],
            applied['blacklist'], applied['deny_unknown']) == (
        True, 2.0, [WHITE], [BLACK], True)
    driver.block()
    assert json.loads(state_file.read_text())['open'] is False
    # At start-up, its options are registered and checked with ours.
    proc = subprocess.run(
        [sys.executable, '-c', 'import sys; from inspector_ha.cmd import '
         'common; print(common.load_config(sys.argv[1:])'
         '.example_pxe_filter.state_file)', '--config-file', str(path)],
        capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, '%s\n' % state_file), \
        proc.stderr


def test_an_out_of_tree_hook_runs_in_the_pipeline_of_processing_hooks(
        tmp_path):
    conf, _ = _conf(tmp_path, '[processing]\n'
                              'processing_hooks = ramdisk_error,example_tag\n')
    hooks = pipeline.Pipeline(conf)
    assert [type(h).__module__ for h in hooks.hooks] == [
        'inspector_ha.processing.hooks.ramdisk_error', 'example_tag_hook']
    data = {'inventory': {'interfaces': [
        {'name': 'eth0', 'mac_address': PXE, 'ipv4_address': '10.0.0.5'}]},
        'boot_interface': PXE}
    assert hooks.before_processing(data) == []
    assert data['example_tag'] == 'seen'
    ironic = hooktools.RecordingIronic()
    ctx = hooktools.context(ironic, known_macs=[PXE])
    hooks.before_update(data, ctx)
    hooktools.send(ironic, ctx)
    patched = hooktools.patched(ironic)
    assert patched['/properties/example_tag'] == 'seen'
    assert patched['/properties/capabilities'] == 'example_tag:yes'
    assert hooks.before_processing(dict(data, example_refuse=True)) == [
        'example_tag refuses the data']
