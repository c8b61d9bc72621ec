"""The accelerators hook and its known-devices file."""

import pytest

from inspector_ha.processing import pipeline
from inspector_ha.processing.hooks import accelerators

import hooktools

T4 = {'vendor_id': '10de', 'product_id': '1eb8', 'bus': '0000:3b:00.0'}


@pytest.fixture
def conf():
    return hooktools.new_conf()


def test_the_shipped_list_is_the_default_and_loads(conf):
    hook = accelerators.AcceleratorsHook(conf)
    assert ('10de', '1eb8') in hook.known
    assert all(set(d) >= {'vendor_id', 'device_id', 'type', 'device_info'}
               for d in hook.known.values())


def test_known_devices_are_written_with_their_pci_address(conf):
    data = {'pci_devices': [T4, {'vendor_id': '8086', 'product_id': '1572',
                                 'bus': '0000:01:00.0'}, 'junk']}
    ironic = hooktools.run(accelerators.AcceleratorsHook(conf), data)
    assert hooktools.patched(ironic) == {'/properties/accelerators': [{
        'vendor_id': '10de', 'device_id': '1eb8', 'type': 'GPU',
        'device_info': 'NVIDIA Corporation Tesla T4',
        'pci_address': '0000:3b:00.0'}]}


@pytest.mark.parametrize('data', [{}, {'pci_devices': []},
                                  {'pci_devices': [dict(T4, vendor_id='1')]}])
def test_no_known_device_writes_nothing(conf, data):
    assert hooktools.run(accelerators.AcceleratorsHook(conf),
                         data).calls == []


def test_a_configured_file_replaces_the_shipped_list(conf, tmp_path):
    path = tmp_path / 'known.yaml'
    path.write_text('pci_devices:\n  - vendor_id: 1234\n    device_id: 5678\n'
                    '    type: FPGA\n    device_info: Test card\n')
    conf.set_override('known_devices', str(path), group='accelerators')
    data = {'pci_devices': [{'vendor_id': '1234', 'product_id': '5678',
                             'bus': 'b'}]}
    ironic = hooktools.run(accelerators.AcceleratorsHook(conf), data)
    [device] = hooktools.patched(ironic)['/properties/accelerators']
    assert (device['type'], device['pci_address']) == ('FPGA', 'b')


@pytest.mark.parametrize('content', [None, 'pci_devices: {}', '[1, 2]',
                                     'pci_devices:\n  - vendor_id: "1"\n',
                                     ': : not yaml'])
def test_a_missing_or_malformed_file_stops_the_pipeline_from_loading(
        conf, tmp_path, content):
    path = tmp_path / 'known.yaml'
    if content is not None:
        path.write_text(content)
    conf.set_override('known_devices', str(path), group='accelerators')
    conf.set_override('processing_hooks', 'ramdisk_error,accelerators',
                      group='processing')
    with pytest.raises(RuntimeError, match='accelerators'):
        pipeline.Pipeline(conf)
