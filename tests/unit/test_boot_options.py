"""Upstream's boot options: ``[DEFAULT] introspection_delay`` sets the
cluster-wide reboot throttle, and the node's ``driver_info/
force_persistent_boot_device`` decides whether PXE boot is persistent."""

import json
import types

from oslo_config import cfg
import pytest

from inspector_ha import conf as conf_mod
from inspector_ha.engine import tasks


def test_upstreams_introspection_delay_sets_the_reboot_throttle(tmp_path):
    path = tmp_path / 'upstream.conf'
    path.write_text('[DEFAULT]\nintrospection_delay = 7\n')
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf(['--config-file', str(path)], project='inspector-ha',
         default_config_files=[])
    assert conf.worker.reboot_throttle == 7.0


class _Ironic:
    def __init__(self, driver_info):
        self.driver_info = driver_info
        self.reads = 0

    def get_node(self, uuid, fields=None):
        self.reads += 1
        return types.SimpleNamespace(to_dict=lambda computed: {
            'driver_info': self.driver_info})


def _persistent(driver_info, snapshot=True):
    ironic = _Ironic(driver_info)
    task = tasks.Tasks(ironic=ironic, store=None, announce=None,
                       throttle=None, pipeline=None, data_store=None,
                       conf=None, claims=None)
    payload = {'node': {'driver_info': driver_info}} if snapshot else None
    request = types.SimpleNamespace(
        payload=json.dumps(payload) if payload else None)
    node = types.SimpleNamespace(uuid='u')
    return task._persistent(node, request), ironic.reads


@pytest.mark.parametrize('value,expected', [
    (None, False), ('Default', False), ('Never', False), ('Always', True),
    ('true', True), ('yes', True), ('false', False), ('junk', False)])
def test_force_persistent_boot_device_as_upstream_reads_it(value,
                                                           expected):
    info = {} if value is None else {'force_persistent_boot_device': value}
    assert _persistent(info) == (expected, 0)


def test_without_a_snapshot_driver_info_is_read_from_ironic():
    assert _persistent({'force_persistent_boot_device': 'Always'},
                       snapshot=False) == (True, 1)
