"""An existing ironic-inspector 12.5 configuration file works with
inspector-ha: what it implements accepts upstream's values, and what it
does not is named in one warning (and by the pre-switch check)."""

import logging

from oslo_config import cfg
from oslo_config import types
import pytest

from inspector_ha import conf as conf_mod
from inspector_ha.conf import opts
from inspector_ha.conf import upstream

#: Where upstream has no bound, ours must reach this far: ten years of
#: seconds, upstream's own cap on [DEFAULT] timeout.
LARGE = 315576000

#: Options whose upstream values are plugin names: inspector-ha accepts
#: the plugins it implements (the others are named at start-up).
PLUGIN_CHOICES = {('processing', 'store_data'), ('pxe_filter', 'driver')}


def _ours():
    return {(group or 'DEFAULT', o.dest): o
            for group, options in opts.list_opts() for o in options}


def _narrower(ours, theirs):
    """Why ``ours`` accepts less than upstream's ``theirs``, or None."""
    kind = ours.type
    if isinstance(kind, (types.Integer, types.Float)):
        if theirs['type'] == 'floating point' and isinstance(kind,
                                                             types.Integer):
            return 'integer where upstream takes a float'
        low, high = theirs.get('min', 0), theirs.get('max', LARGE)
        if kind.min is not None and kind.min > low:
            return 'min %s > %s' % (kind.min, low)
        if kind.max is not None and kind.max < high:
            return 'max %s < %s' % (kind.max, high)
    choices = getattr(kind, 'choices', None)
    if choices:
        missing = set(theirs.get('choices') or ['<any>']) - set(choices)
        if missing:
            return 'refuses %s' % sorted(missing)
    return None


def test_every_upstream_option_we_implement_accepts_upstreams_range():
    ours = _ours()
    narrower = {}
    for group, options in upstream.upstream_options().items():
        for name, theirs in options.items():
            if (group, name) in ours and (group, name) not in PLUGIN_CHOICES:
                why = _narrower(ours[(group, name)], theirs)
                if why:
                    narrower['[%s] %s' % (group, name)] = why
    assert not narrower


def _conf(tmp_path, text):
    path = tmp_path / 'ironic-inspector.conf'
    path.write_text(text)
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf(['--config-file', str(path)], project='inspector-ha',
         default_config_files=[], default_config_dirs=[])
    return conf, path


UPSTREAM_CONF = """\
[DEFAULT]
timeout = 100000
auth_strategy = noauth
use_ssl = false
introspection_delay = 5
enable_mdns = false
no_such_option = 1
[ironic]
auth_type = password
auth_url = http://keystone/v3
username = inspector
[processing]
store_data = database
ramdisk_logs_dir = /var/log/ironic-inspector/ramdisk
[swift]
container = introspection
[keystone_authtoken]
www_authenticate_uri = http://keystone/v3
"""


def test_a_large_upstream_timeout_is_accepted(tmp_path):
    conf, _ = _conf(tmp_path, UPSTREAM_CONF)
    assert conf.timeout == 100000


def test_unimplemented_options_are_named_in_one_start_up_warning(
        tmp_path, caplog):
    conf, path = _conf(tmp_path, UPSTREAM_CONF)
    with caplog.at_level(logging.WARNING, logger='inspector_ha'):
        upstream.warn_unused(conf)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1, warnings
    text = warnings[0]
    for name in ('[DEFAULT] enable_mdns', '[swift] container',
                 '[DEFAULT] no_such_option'):
        assert name in text
    for used in ('timeout', 'auth_url', 'username', 'www_authenticate_uri',
                 'store_data', 'use_ssl', 'introspection_delay',
                 'ramdisk_logs_dir'):
        assert '%s,' % used not in text and not text.endswith(used)
    assert str(path) in text


def test_a_file_with_only_implemented_options_gives_no_warning(
        tmp_path, caplog):
    conf, _ = _conf(tmp_path, '[DEFAULT]\ntimeout = 10\n[processing]\n'
                              'store_data = database\n')
    with caplog.at_level(logging.WARNING, logger='inspector_ha'):
        upstream.warn_unused(conf)
    assert not caplog.records


def test_the_check_names_ignored_options_and_refused_values(tmp_path):
    conf, path = _conf(tmp_path, UPSTREAM_CONF.replace(
        'store_data = database', 'store_data = swift'))
    findings = upstream.check_file(conf, str(path))
    lines = '\n'.join(findings.lines())
    assert findings.refused
    assert '[processing] store_data = swift is refused' in lines
    assert 'ironic-inspector options that inspector-ha does not implement' \
        in lines and '[swift] container' in lines
    assert 'unknown to inspector-ha and to ironic-inspector 12.5, ignored: ' \
        '[DEFAULT] no_such_option' in lines


@pytest.mark.parametrize('value', ['0', '-1'])
def test_a_timeout_of_zero_or_less_is_accepted_as_upstream(tmp_path, value):
    conf, _ = _conf(tmp_path, '[DEFAULT]\ntimeout = %s\n' % value)
    assert conf.timeout == int(value)
