"""The shipped systemd units (etc/systemd/): accepted by systemd-analyze
and set up for the process's notify, drain and kill behaviour. READY=1
itself is read from a running API in test_serving.py."""

import configparser
import pathlib
import subprocess

import pytest

import cluster as cluster_mod
import needs
from inspector_ha.conf import api as api_opts
from inspector_ha.conf import worker as worker_opts

UNITS = pathlib.Path(__file__).resolve().parents[2] / 'etc' / 'systemd'
INSTALLED_BIN = '/usr/local/bin/'
API = 'inspector-ha-api.service'
WORKER = 'inspector-ha-worker@.service'


def _default(opts, name):
    return next(o.default for o in opts.OPTS if o.name == name)


def _service(unit):
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str
    parser.read(UNITS / unit)
    return parser['Service']


def test_the_shipped_units_pass_systemd_analyze_verify(tmp_path):
    analyze = needs.tool('systemd-analyze', 'systemd')
    for unit in UNITS.glob('*.service'):
        (tmp_path / unit.name).write_text(unit.read_text().replace(
            INSTALLED_BIN, '%s/' % cluster_mod.BIN))
    names = sorted(p.name for p in tmp_path.glob('*.service'))
    names = [n.replace('@.', '@1.') for n in names]
    result = subprocess.run([analyze, 'verify', '--man=no'] + names,
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == '', result.stderr


@pytest.mark.parametrize('unit', [API, WORKER])
def test_a_unit_is_notify_restarts_on_failure_and_kills_its_whole_group(
        unit):
    service = _service(unit)
    assert service['Type'] == 'notify'
    assert service['Restart'] == 'on-failure'
    assert service['KillMode'] == 'mixed'
    assert service['ExecReload'] == '/bin/kill -HUP $MAINPID'


def test_the_api_unit_waits_longer_than_the_drain_plus_the_requests():
    bound = (_default(api_opts, 'drain_time') +
             _default(api_opts, 'shutdown_timeout'))
    assert int(_service(API)['TimeoutStopSec']) > bound


def test_the_worker_unit_waits_longer_than_the_worker_shutdown():
    bound = _default(worker_opts, 'shutdown_timeout')
    assert int(_service(WORKER)['TimeoutStopSec']) > bound
