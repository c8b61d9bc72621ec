"""An existing ironic-inspector 12.5 configuration file works with
inspector-ha: what it implements accepts upstream's values, and what it
does not is named in one warning (and by the pre-switch check)."""

import logging
import pathlib
import re

from oslo_config import types
import pytest

from inspector_ha.conf import opts
from inspector_ha.conf import upstream
import conffiles

#: Where upstream has no bound, ours must reach this far: ten years of
#: seconds, upstream's own cap on [DEFAULT] timeout.
LARGE = 315576000



def _ours():
    """Our options by ``(group, name)``, also in the group 12.5 has for
    one that moved (``[iptables] ip_version`` is ``[pxe_filter]``'s)."""
    found = {}
    for group, options in opts.list_opts():
        for opt in options:
            found[(group or 'DEFAULT', opt.dest)] = opt
            for old in opt.deprecated_opts:
                if old.name in (None, opt.dest):  # the same option
                    found[(old.group or group or 'DEFAULT', opt.dest)] = opt
    return found


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
            if (group, name) in ours:
                why = _narrower(ours[(group, name)], theirs)
                if why:
                    narrower['[%s] %s' % (group, name)] = why
    assert not narrower


def _conf(tmp_path, text):
    return conffiles.read(tmp_path, text, 'ironic-inspector.conf')


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


PXE_12_5 = """\
[pxe_filter]
driver = iptables
[iptables]
dnsmasq_interface = br-pxe
ip_version = 6
ethoib_interfaces = ib0,ib1
firewall_chain = pxe
"""


def test_12_5s_pxe_options_in_iptables_are_read_by_every_driver(
        tmp_path, caplog):
    conf, path = _conf(tmp_path, PXE_12_5)
    assert (conf.pxe_filter.dnsmasq_interface, conf.pxe_filter.ip_version,
            conf.pxe_filter.ethoib_interfaces) == ('br-pxe', '6',
                                                   ['ib0', 'ib1'])
    assert sorted(r.getMessage() for r in caplog.records) == [
        'Deprecated: Option "%s" from group "iptables" is deprecated. Use '
        'option "%s" from group "pxe_filter".' % (name, name)
        for name in ('dnsmasq_interface', 'ethoib_interfaces',
                     'ip_version')]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger='inspector_ha'):
        upstream.warn_unused(conf)
    assert not caplog.records
    findings = upstream.check_file(conf, str(path))
    assert findings.lines() == [
        'OK: inspector-ha implements every option set in %s and accepts '
        'every value' % path]


def test_the_check_refuses_a_driver_not_installed_and_old_names_values(
        tmp_path):
    conf, path = _conf(tmp_path, PXE_12_5.replace(
        'driver = iptables', 'driver = x').replace(
        'ip_version = 6', 'ip_version = 5'))
    refused = {key: reason for key, _, reason in
               upstream.check_file(conf, str(path)).refused}
    assert sorted(refused) == [('iptables', 'ip_version'),
                               ('pxe_filter', 'driver')]
    assert refused[('pxe_filter', 'driver')].startswith(
        "no PXE filter driver 'x' (installed: ")


MIGRATION_DOC = (pathlib.Path(__file__).resolve().parents[2] / 'doc' /
                 'migrating-from-ironic-inspector.md')


def _named_in_bullet(start):
    """The ``[group] option`` and ``[group]`` names of the migration
    doc's bullet that begins with ``start``."""
    text = MIGRATION_DOC.read_text()
    bullet = text[text.index('- ' + start):]
    bullet = bullet[:bullet.index('\n- ')] if '\n- ' in bullet else bullet
    return re.findall(r'`\[(\w+)\](?:\s+(\w+))?`', ' '.join(bullet.split()))


def _implemented(group, name):
    ours = _ours()
    if name:
        return (group, name) in ours
    return any(g == group for g, _ in ours)


def test_the_migration_doc_names_unused_and_implemented_options_truly():
    unused = _named_in_bullet('Not used here')
    implemented = _named_in_bullet('Implemented as upstream')
    assert len(unused) >= 6 and len(implemented) >= 5
    assert [k for k in unused if _implemented(*k)] == []
    assert [k for k in implemented if not _implemented(*k)] == []
    defaults = {(g or 'DEFAULT', o.dest): o.default
                for g, options in opts.list_opts() for o in options}
    assert defaults[('DEFAULT', 'auth_strategy')] == 'keystone'
    assert '`[DEFAULT] auth_strategy` defaults to `keystone`' in ' '.join(
        MIGRATION_DOC.read_text().split())
