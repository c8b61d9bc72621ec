"""The options: bounded, and the sample configuration is generated."""

import pathlib
import subprocess
import sys

from oslo_config import cfg
from oslo_config import types

from inspector_ha.conf import opts

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


def test_the_sample_configuration_file_is_the_generated_one(tmp_path):
    out = tmp_path / 'sample.conf'
    generator = pathlib.Path(sys.executable).parent / 'oslo-config-generator'
    subprocess.run([generator, '--config-file',
                    ROOT / 'tools' / 'config-generator.conf',
                    '--output-file', out], check=True, capture_output=True)
    committed = ROOT / 'etc' / 'inspector-ha' / 'inspector-ha.conf.sample'
    assert out.read_text() == committed.read_text(), (
        'regenerate it: oslo-config-generator --config-file '
        'tools/config-generator.conf')


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
