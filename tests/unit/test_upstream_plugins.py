"""Plugins written for ironic-inspector (its entry-point namespaces and
call signatures) load and run through the adapter. The plugin is
``tests/plugins/upstream_style``, installed in the test venv by
``tools/install-test-deps.sh``."""

from openstack.baremetal.v1 import node as sdk_node
import pytest

from inspector_ha.common import retry
from inspector_ha.db import rules as rules_db
from inspector_ha.processing import base
from inspector_ha.processing import not_found
from inspector_ha.processing import pipeline
from inspector_ha.processing import upstream
from inspector_ha.processing.hooks import interfaces
from inspector_ha.rules import engine
from inspector_ha.rules import plugins as plugins_mod

import hooktools
import needs

PXE, GONE = '52:54:00:0b:00:01', '52:54:00:0b:00:02'

needs.module('upstream_style_plugin')


def _conf():
    conf = hooktools.new_conf()
    conf.set_override('processing_hooks',
                      'validate_interfaces,upstream_style',
                      group='processing')
    return conf


def _data(**extra):
    data = {'inventory': {'interfaces': [
        {'name': 'eth0', 'mac_address': PXE, 'ipv4_address': '10.0.0.5'}]},
        'boot_interface': PXE}
    data.update(extra)
    return data


def test_an_upstream_style_hook_collects_its_changes_like_ours():
    hooks = pipeline.Pipeline(_conf())
    assert type(hooks.hooks[0]) is interfaces.ValidateInterfacesHook
    data = _data()
    assert hooks.before_processing(data) == []
    assert data['upstream_style_seen'] is True
    ironic = hooktools.RecordingIronic()
    ids = {mac: ironic.add_port(hooktools.UUID, mac) for mac in (PXE, GONE)}
    ctx = hooktools.context(ironic, known_macs=[PXE, GONE])
    hooks.before_update(data, ctx)
    assert ironic.written('delete_port') == []  # collected, not sent
    hooktools.send(ironic, ctx)
    patched = hooktools.patched(ironic)
    assert patched['/properties/upstream_style'] == hooktools.UUID
    assert patched['/properties/capabilities'] == 'upstream_style:yes'
    assert patched['/extra/upstream_style'] is True
    assert ironic.written('delete_port') == [(ids[GONE],)]
    assert (ids[PXE], [{'op': 'add', 'path': '/extra/seen',
                        'value': True}]) in ironic.written('patch_port')
    assert ironic.written('add_trait') == [(hooktools.UUID,
                                             'CUSTOM_UPSTREAM_STYLE')]


def test_an_exception_of_an_upstream_hook_is_a_hook_failure():
    hooks = pipeline.Pipeline(_conf())
    assert hooks.before_processing(_data(refuse_me=True)) == [
        'upstream-style hook refuses the data']


@pytest.mark.parametrize('error', [
    retry.Interrupted('waiting to call Ironic'),
    retry.BackendUnavailable('ironic', 'refused')])
def test_a_stop_or_a_backend_gone_inside_an_upstream_hook_is_not_its_failure(
        error):
    def hook_body(*_args):
        raise error

    adapted = upstream.UpstreamHook(hooktools.new_conf(), 'upstream_style',
                                    object())
    with pytest.raises(type(error)):
        adapted._call(hook_body)


def test_a_name_in_neither_namespace_refuses_to_load():
    conf = _conf()
    conf.set_override('processing_hooks', 'upstream_style,nope',
                      group='processing')
    with pytest.raises(RuntimeError, match='nope'):
        pipeline.Pipeline(conf)


def test_an_upstream_node_not_found_hook_is_adapted():
    conf = _conf()
    conf.set_override('node_not_found_hook', 'upstream_style',
                      group='processing')
    hook = not_found.load(conf, hooktools.RecordingIronic())
    assert isinstance(hook, not_found.NodeNotFoundHook)
    assert hook(_data()) is None


# Rule conditions and actions in upstream's namespaces

def test_upstream_rule_plugins_validate_check_and_act(store):
    plugins = plugins_mod.Plugins()
    assert 'upstream-starts-with' in plugins.condition_names
    assert 'upstream-tag' in plugins.action_names
    with pytest.raises(plugins_mod.InvalidRule, match='tag'):
        engine.validate({'conditions': [], 'actions': [
            {'action': 'upstream-tag'}]}, plugins)
    for prefix, applied in (('x86', True), ('arm', False)):
        rule = engine.validate({
            'conditions': [{'op': 'upstream-starts-with',
                            'field': 'cpu_arch', 'value': prefix}],
            'actions': [{'action': 'upstream-tag',
                         'tag': 'cpus-{data[cpus]}'}]}, plugins)
        uuid = store.transaction(rules_db.create, rule)['uuid']
        node = sdk_node.Node(id=hooktools.UUID, driver='fake-hardware',
                             properties={})
        context = base.NodeContext(hooktools.RecordingIronic(), node, [])
        engine.apply(store.transaction(rules_db.list_all), context,
                     {'cpu_arch': 'x86_64', 'cpus': 8})
        store.transaction(rules_db.delete, uuid)
        expected = [{'op': 'add', 'path': '/properties/upstream_tag',
                     'value': 'cpus-8'}] if applied else []
        assert context.patches == expected
        assert context.traits == (
            [('add', 'CUSTOM_UPSTREAM_RULE')] if applied else [])
