"""The devstack plugin, sourced phase by phase with recording stand-ins
of devstack's functions (devstack itself clones from the network), and
shellcheck on every shell script of the repository."""

import pathlib
import subprocess

import needs

ROOT = pathlib.Path(__file__).resolve().parents[2]
STANDINS = pathlib.Path(__file__).resolve().parent / 'devstack_standins.sh'
CONF = '/etc/inspector-ha/inspector-ha.conf'


def _stack(tmp_path, *phases, keystone=True, env=None):
    record = tmp_path / 'calls'
    record.write_text('')
    stub_bin = tmp_path / 'bin'
    stub_bin.mkdir(exist_ok=True)
    dbsync = stub_bin / 'inspector-ha-dbsync'
    dbsync.write_text('#!/bin/sh\necho "dbsync $*" >>%s\n' % record)
    dbsync.chmod(0o755)
    argv = ['bash', STANDINS, record, stub_bin, ROOT / 'devstack']
    argv += ['keystone'] if keystone else []
    subprocess.run([str(a) for a in argv] + list(phases), check=True,
                   env=env, capture_output=True, text=True, timeout=60)
    return record.read_text().splitlines()


def test_install_is_one_editable_install_with_the_backends_extra(tmp_path):
    calls = _stack(tmp_path, 'stack install')
    assert calls == ['setup_develop /opt/stack/inspector-ha backends']


def test_post_config_uses_keystone_etcd3_and_registers_the_service(
        tmp_path):
    calls = _stack(tmp_path, 'stack post-config')
    for expected in (
            'iniset %s DEFAULT auth_strategy keystone' % CONF,
            'configure_keystone_authtoken_middleware %s inspector-ha' % CONF,
            'configure_keystone_authtoken_middleware %s inspector-ha ironic'
            % CONF,
            'iniset %s coordination backend_url '
            'etcd3+http://192.0.2.5:2379' % CONF,
            'create_service_user inspector-ha admin',
            'get_or_create_endpoint baremetal-introspection RegionOne '
            'http://192.0.2.5:5050',
            'recreate_database inspector_ha',
            'dbsync --config-file %s upgrade' % CONF):
        assert expected in calls, calls
    assert any(c.startswith('get_or_create_service inspector-ha '
                            'baremetal-introspection') for c in calls)


def test_without_keystone_there_is_no_authentication_and_no_account(
        tmp_path):
    calls = _stack(tmp_path, 'stack post-config', keystone=False)
    assert 'iniset %s DEFAULT auth_strategy noauth' % CONF in calls
    assert 'iniset %s ironic auth_type none' % CONF in calls
    assert not [c for c in calls if 'keystone' in c or 'create' in c
                and 'database' not in c]


def test_extra_starts_every_worker_and_the_api_and_waits_for_it(tmp_path):
    calls = [c.split(' --')[0] for c in _stack(tmp_path, 'stack extra')]
    assert calls == [
        'run_process inspector-ha-worker-1 /%s/bin/inspector-ha-worker' % (
            str(tmp_path).strip('/')),
        'run_process inspector-ha-worker-2 /%s/bin/inspector-ha-worker' % (
            str(tmp_path).strip('/')),
        'run_process inspector-ha-api /%s/bin/inspector-ha-api' % (
            str(tmp_path).strip('/')),
        'wait_for_service 60 http://192.0.2.5:5050']


def test_disabling_inspector_ha_worker_disables_every_worker(tmp_path):
    calls = _stack(tmp_path, 'stack extra',
                   env={'DISABLE': 'inspector-ha-worker',
                        'PATH': '/usr/bin:/bin'})
    assert not [c for c in calls if 'worker' in c]
    assert any(c.startswith('run_process inspector-ha-api') for c in calls)


def test_unstack_stops_everything_and_clean_removes_the_files(tmp_path):
    calls = _stack(tmp_path, 'unstack', 'clean')
    assert calls == ['stop_process inspector-ha-api',
                     'stop_process inspector-ha-worker-1',
                     'stop_process inspector-ha-worker-2',
                     'sudo rm -rf /etc/inspector-ha '
                     '/opt/stack/data/inspector-ha']


def _shell_scripts():
    """The repository's own (tracked or new) scripts."""
    files = subprocess.run(['git', 'ls-files', '--cached', '--others',
                            '--exclude-standard'], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    return sorted({ROOT / f for f in files if f.endswith('.sh')} |
                  {ROOT / 'devstack' / 'settings'})


def test_shellcheck_passes_on_every_shell_script():
    binary = needs.tool('shellcheck', 'shellcheck')
    scripts = _shell_scripts()
    assert ROOT / 'devstack' / 'plugin.sh' in scripts
    result = subprocess.run([binary, '-s', 'bash'] + [str(s) for s in
                                                      scripts],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
