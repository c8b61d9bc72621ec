"""The way on to Ironic's built-in inspection (issue 53): the rules of
inspector-ha, exported with ``inspector-ha-dbsync export-to-ironic``,
give a node inspected by a real Ironic 39 (its ``agent`` inspect
interface, a simulated ramdisk posting to ``/v1/continue_inspection``)
the same properties, capabilities and traits as inspector-ha gave a
node of the same hardware with the original rules. Every upstream
condition and action that converts is among them; the ones that do not
are listed by the command with why."""

import signal
import subprocess

import pytest
import requests

import backends
import batch
import cluster as cluster_mod
import embedded
import ramdisk

SCOPE = 'rack-a'
#: A capability every node starts with; a rule removes it.
OLD_CAPABILITY = 'old_cap'


def _cond(op, field, value=None, **extra):
    cond = dict({'op': op, 'field': field}, **extra)
    if value is not None:
        cond['value'] = value
    return cond


#: Every convertible condition (true on the test's hardware) and action,
#: and a rule whose condition is false; oldest first.
RULES = [
    {'description': 'eq on text, set-attribute, example (a log line)',
     'conditions': [_cond('eq', 'inventory.cpu.architecture', 'x86_64')],
     'actions': [{'action': 'set-attribute', 'path': '/extra/eq',
                  'value': 'yes'},
                 {'action': 'example'}]},
    {'description': 'eq on an integer, ne, a formatted value',
     'conditions': [_cond('eq', 'inventory.cpu.count', 4),
                    _cond('ne', 'inventory.cpu.architecture', 'aarch64')],
     'actions': [{'action': 'set-attribute', 'path': '/extra/cpus',
                  'value': 'cpus-{data[inventory][cpu][count]}'},
                 {'action': 'add-trait', 'name': 'CUSTOM_NE'}]},
    {'description': 'is-empty on a missing field, in-net',
     'conditions': [_cond('is-empty', 'node://extra.missing'),
                    _cond('in-net', 'inventory.bmc_address',
                          '198.51.0.0/16')],
     'actions': [{'action': 'set-capability', 'name': 'rule_net',
                  'value': 'yes'},
                 {'action': 'set-capability', 'name': OLD_CAPABILITY}]},
    {'description': 'matches, contains inverted, extend-attribute',
     'conditions': [_cond('matches', 'inventory.cpu.model_name', 'QEM.'),
                    _cond('contains', 'inventory.cpu.model_name', 'Xeon',
                          invert=True)],
     'actions': [{'action': 'extend-attribute', 'path': '/extra/tags',
                  'value': 'matched', 'unique': True},
                 {'action': 'extend-attribute', 'path': '/extra/tags',
                  'value': 'matched', 'unique': True},
                 {'action': 'add-trait', 'name': 'CUSTOM_GONE'},
                 {'action': 'remove-trait', 'name': 'CUSTOM_GONE'}]},
    {'description': 'scoped, a node field',
     'scope': SCOPE,
     'conditions': [_cond('eq', 'node://properties.rack', 'a')],
     'actions': [{'action': 'set-capability', 'name': 'scoped',
                  'value': 'rack-{data[inventory][cpu][architecture]}'}]},
    {'description': 'false: never applied',
     'conditions': [_cond('eq', 'inventory.cpu.architecture', 'aarch64')],
     'actions': [{'action': 'add-trait', 'name': 'CUSTOM_NEVER'}]},
    {'description': 'false: matches is a whole match, not a prefix',
     'conditions': [_cond('matches', 'inventory.cpu.model_name', 'QEM')],
     'actions': [{'action': 'add-trait', 'name': 'CUSTOM_PREFIX'}]},
]
#: Rules the export must list, not convert.
REFUSED = [
    {'description': 'gt: Ironic compares text',
     'conditions': [_cond('gt', 'inventory.cpu.count', 2)],
     'actions': [{'action': 'add-trait', 'name': 'CUSTOM_GT'}]},
    {'description': 'a wildcard field',
     'conditions': [_cond('eq', 'inventory.interfaces[*].name', 'eth0',
                          multiple='any')],
     'actions': [{'action': 'add-trait', 'name': 'CUSTOM_ANY'}]},
]
#: The capabilities the rules name (the hooks of each side add others).
RULE_CAPABILITIES = {'rule_net', OLD_CAPABILITY, 'scoped'}


def _node(ironic, index):
    """A node of the test's hardware (in the rules' scope, with the
    capability a rule removes) and its ramdisk's post."""
    macs = batch.two_macs(index)
    bmc = '198.51.100.%d' % (index % 250 + 1)
    uuid = ironic.create_node(macs=macs[:1], bmc_address=bmc)
    ironic.request('PATCH', '/v1/nodes/%s' % uuid, json=[
        {'op': 'add', 'path': '/properties/inspection_scope',
         'value': SCOPE},
        {'op': 'add', 'path': '/properties/rack', 'value': 'a'},
        {'op': 'add', 'path': '/properties/capabilities',
         'value': '%s:1' % OLD_CAPABILITY}])
    return uuid, ramdisk.ipa_payload(macs, bmc)


def _create_rules(url, rules):
    for rule in rules:
        answer = requests.post(url + '/v1/rules', json=rule, timeout=30)
        assert answer.status_code == 201, answer.text


def _export(tmp_path, ironic_url, *args):
    conf = tmp_path / 'export.conf'
    conf.write_text('[DEFAULT]\nstate_path = %s\n[ironic]\nauth_type = none\n'
                    % (tmp_path / 'state'))
    return subprocess.run(
        [cluster_mod.BIN / 'inspector-ha-dbsync', '--config-file', conf,
         'export-to-ironic', '--ironic-url', ironic_url, *args],
        capture_output=True, text=True, timeout=120, check=False)


def _effects(ironic, uuid):
    """What the rules change: extra, the rules' capabilities, traits."""
    node = ironic.get_node(uuid)
    # NOTE: a list, not a dict: a capability set twice shows.
    capabilities = sorted(
        item for item in
        (node['properties'].get('capabilities') or '').split(',')
        if item.split(':', 1)[0] in RULE_CAPABILITIES)
    traits = ironic.request('GET', '/v1/nodes/%s/traits' % uuid)['traits']
    return {'extra': node['extra'], 'capabilities': capabilities,
            'traits': sorted(traits)}


def test_exported_rules_give_an_ironic_inspected_node_the_same_changes(
        tmp_path, inspecting_ironic):
    ironic = inspecting_ironic
    ironic.delete_rules()
    proc, url = embedded.start(tmp_path, ironic.url)
    try:
        _create_rules(url, RULES)
        ours, ours_post = _node(ironic, 1)
        states = batch.introspect(ironic, [url], {ours: ours_post}, 120)
        assert states[ours]['state'] == 'finished', states
        # NOTE: created after: they would have changed this node.
        _create_rules(url, REFUSED)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    exported = _export(tmp_path, ironic.url)
    assert exported.returncode == 0, exported.stderr
    assert 'rules: 9, converted 7 (created 7, already in Ironic 0), not ' \
        'converted 2' in exported.stdout, exported.stdout
    assert exported.stdout.count('not converted: rule') == 2
    again = _export(tmp_path, ironic.url)
    assert 'created 0, already in Ironic 7' in again.stdout, again.stdout
    theirs, theirs_post = _node(ironic, 2)
    ironic.inspect(theirs, theirs_post)
    expected = _effects(ironic, ours)
    assert expected['traits'] == ['CUSTOM_NE'], expected
    assert expected['extra'] == {'eq': 'yes', 'cpus': 'cpus-4',
                                 'tags': ['matched']}, expected
    assert expected['capabilities'] == ['rule_net:yes',
                                        'scoped:rack-x86_64'], expected
    assert _effects(ironic, theirs) == expected
    ironic.delete_rules()


def test_a_dry_run_prints_the_converted_rules_and_writes_nothing(
        tmp_path, inspecting_ironic):
    proc, url = embedded.start(tmp_path, inspecting_ironic.url)
    try:
        _create_rules(url, RULES[:1])
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    before = inspecting_ironic.rules()
    dry = _export(tmp_path, inspecting_ironic.url, '--dry-run')
    assert dry.returncode == 0, dry.stderr
    assert '"op": "set-attribute"' in dry.stdout
    assert inspecting_ironic.rules() == before


def test_a_converted_fail_action_fails_ironic_inspection_with_its_message(
        tmp_path, inspecting_ironic):
    ironic = inspecting_ironic
    ironic.delete_rules()
    message = 'Refused by rule {1}'
    proc, url = embedded.start(tmp_path, ironic.url)
    try:
        _create_rules(url, [{
            'conditions': [_cond('eq', 'inventory.cpu.architecture',
                                 'x86_64')],
            'actions': [{'action': 'fail', 'message': message}]}])
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert _export(tmp_path, ironic.url).returncode == 0
    uuid, post = _node(ironic, 3)
    with pytest.raises(Exception, match=message.replace('{', r'\{')):
        ironic.inspect(uuid, post)
    backends.wait_for(lambda: ironic.get_node(uuid)['provision_state'] ==
                      'inspect failed', 30)
    ironic.delete_rules()
