"""The options: bounded, and the sample configuration is generated."""

import importlib.metadata
import os
import pathlib
import socket
import subprocess
import sys

from oslo_config import cfg
from oslo_config import types

from inspector_ha.conf import opts
from inspector_ha.conf import plugins

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _all_opts():
    return [(group, opt) for group, options in opts.list_opts()
            for opt in options]


def test_every_numeric_option_of_ours_has_a_minimum_and_a_maximum():
    # NOTE: [cors] is oslo.middleware's, as upstream registers it.
    unbounded = [(g, o.name) for g, o in _all_opts() if g != 'cors'
                 and isinstance(o.type, (types.Integer, types.Float))
                 and not o.name.replace('_', '-').startswith(
                     ('connect-', 'status-code', 'timeout'))
                 and (o.type.min is None or o.type.max is None)]
    assert not unbounded


def _test_plugin_groups():
    """The option groups of plugins installed from other packages (the
    test venv has tests/plugins/out_of_tree): not in the sample."""
    groups = set()
    for selector in plugins.SELECTORS:
        for entry_point in importlib.metadata.entry_points(
                group=selector.namespace):
            if entry_point.dist.name != 'inspector-ha':
                lister = getattr(entry_point.load(), 'list_opts', list)
                groups.update(group for group, _ in lister())
    return groups


def _without(text, groups):
    """``text`` of a sample without the sections of ``groups``."""
    kept, skip = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith('['):
            skip = line.strip()[1:-1] in groups
        if not skip:
            kept.append(line)
    return ''.join(kept)


def test_the_sample_configuration_file_is_the_generated_one(tmp_path):
    out = tmp_path / 'sample.conf'
    generator = pathlib.Path(sys.executable).parent / 'oslo-config-generator'
    subprocess.run([generator, '--config-file',
                    ROOT / 'tools' / 'config-generator.conf',
                    '--output-file', out], check=True, capture_output=True)
    committed = ROOT / 'etc' / 'inspector-ha' / 'inspector-ha.conf.sample'
    foreign = _test_plugin_groups()
    assert _without(out.read_text(), foreign) == committed.read_text(), (
        'regenerate it: oslo-config-generator --config-file '
        'tools/config-generator.conf, then remove the sections of the '
        'test plugins: %s' % ', '.join(sorted(foreign)))


def test_each_drivers_own_group_is_in_the_sample_but_not_the_services():
    service = {group for group, _ in opts.service_opts()}
    listed = {group for group, _ in opts.list_opts()}
    for group in ('iptables', 'nftables', 'dnsmasq_pxe_filter'):
        assert group in listed and group not in service
    sample = (ROOT / 'etc' / 'inspector-ha' /
              'inspector-ha.conf.sample').read_text()
    for section in ('[iptables]', '[nftables]', '[dnsmasq_pxe_filter]'):
        assert '\n%s\n' % section in sample


def _start(tmp_path, text):
    """``load_config`` of a file holding ``text``, in a child process."""
    path = tmp_path / 'inspector-ha.conf'
    path.write_text(text)
    return subprocess.run(
        [sys.executable, '-c', 'import sys; from inspector_ha.cmd import '
         'common; common.load_config(sys.argv[1:])', '--config-file',
         str(path)], capture_output=True, text=True, timeout=60)


def _error_lines(proc):
    return [line for line in proc.stderr.splitlines()
            if line.startswith('-c: error: ')]


def test_an_unknown_pxe_filter_driver_is_one_line_and_exit_2(tmp_path):
    proc = _start(tmp_path, '[pxe_filter]\ndriver = x\n')
    installed = plugins.installed('inspector_ha.pxe_filter')
    assert proc.returncode == 2, proc.stderr
    assert _error_lines(proc) == [
        "-c: error: [pxe_filter] driver: no PXE filter driver 'x' "
        "(installed: %s)" % ', '.join(installed)]
    assert {'dnsmasq', 'iptables', 'nftables', 'noop'} <= set(installed)


def test_an_unknown_data_store_is_one_line_and_exit_2(tmp_path):
    proc = _start(tmp_path, '[processing]\nstore_data = swift\n')
    assert proc.returncode == 2, proc.stderr
    assert _error_lines(proc) == [
        "-c: error: [processing] store_data: no data store 'swift' "
        "(installed: database, none)"]


def test_a_bad_value_of_the_chosen_drivers_option_is_one_line(tmp_path):
    proc = _start(tmp_path, '[pxe_filter]\ndriver = dnsmasq\n'
                            '[dnsmasq_pxe_filter]\n'
                            'purge_dhcp_hostsdir = perhaps\n')
    assert proc.returncode == 2, proc.stderr
    assert _error_lines(proc) == [
        '-c: error: [dnsmasq_pxe_filter] purge_dhcp_hostsdir: '
        'Unexpected boolean value \'perhaps\'']


def test_a_bad_value_of_a_chosen_hooks_option_is_one_line(tmp_path):
    proc = _start(tmp_path, '[processing]\nprocessing_hooks = '
                            '$default_processing_hooks,extra_hardware\n'
                            '[extra_hardware]\nstrict = perhaps\n')
    assert proc.returncode == 2, proc.stderr
    assert _error_lines(proc) == [
        '-c: error: [extra_hardware] strict: '
        'Unexpected boolean value \'perhaps\'']
    # NOTE: a hook that is not chosen does not read its options.
    proc = _start(tmp_path, '[extra_hardware]\nstrict = perhaps\n')
    assert proc.returncode == 0, proc.stderr


def test_a_hooks_options_are_registered_as_it_is_loaded(tmp_path):
    from inspector_ha import conf as conf_mod
    from inspector_ha.processing import pipeline
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    path = tmp_path / 'inspector-ha.conf'
    path.write_text('[processing]\nprocessing_hooks = capabilities\n'
                    '[capabilities]\nboot_mode = true\n')
    conf(['--config-file', str(path)], default_config_files=[])
    assert 'capabilities' not in conf
    pipeline.Pipeline(conf)
    assert conf.capabilities.boot_mode is True


def test_upstream_option_names_carry_over_from_ironic_inspector():
    conf = cfg.ConfigOpts()
    from inspector_ha import conf as conf_mod
    conf_mod.register_opts(conf)
    conf([])
    for group, name in [(None, 'listen_address'), (None, 'listen_port'),
                        (None, 'auth_strategy'), (None, 'timeout'),
                        ('database', 'connection'),
                        ('coordination', 'backend_url'),
                        ('ironic', 'auth_type'),
                        ('ironic', 'endpoint_override'),
                        ('processing', 'store_data'),
                        ('processing', 'processing_hooks')]:
        assert name in (conf[group] if group else conf), (group, name)


def test_an_api_process_that_fails_to_start_exits_and_says_why(tmp_path):
    """Its listener was bound (and its thread pool started) before the
    service failed to build: the process still exits."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, INSPECTOR_HA_STATE=str(tmp_path),
               OS_DEFAULT__LISTEN_PORT=str(port),
               OS_PROCESSING__PROCESSING_HOOKS='$default_processing_hooks,'
                                               'nope')
    env.pop('INSPECTOR_HA_CONFIG_FILE', None)
    proc = subprocess.run(
        [pathlib.Path(sys.executable).parent / 'inspector-ha'], env=env,
        capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert 'Unknown processing hooks: nope' in proc.stderr
