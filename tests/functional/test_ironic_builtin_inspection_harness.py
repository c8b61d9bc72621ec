"""The harness of Ironic 39's own in-band inspection
(:class:`ironic_server.InspectingIronic`: the ``agent`` inspect interface
with :data:`ironic_server.BUILTIN_HOOKS`, and its inspection rules), the
side against which inspector-ha's rules are compared: a node inspected
from a simulated ramdisk's post gets what the hooks and a rule set."""

import pytest

import ramdisk

MACS = ['52:54:00:39:00:01', '52:54:00:39:00:02']
BMC = '192.0.2.39'

#: The actions of the smoke rule, as Ironic 39 names their args.
ACTIONS = [
    {'op': 'set-attribute',
     'args': {'path': '/properties/rule_hit', 'value': 'yes'}},
    {'op': 'add-trait', 'args': {'name': 'CUSTOM_RULED'}},
    {'op': 'set-capability', 'args': {'name': 'boot_mode', 'value': 'uefi'}},
]


@pytest.fixture
def node(inspecting_ironic):
    """A node with two PXE ports and a BMC address (``manageable``), on
    an Ironic with no rule (the Ironic is shared); it and every rule are
    deleted afterwards."""
    ironic = inspecting_ironic
    ironic.delete_rules()
    uuid_ = ironic.create_node(name='harness', macs=MACS, bmc_address=BMC)
    try:
        yield uuid_
    finally:
        ironic.delete_rules()
        if ironic.get_node(uuid_)['provision_state'] != 'manageable':
            ironic.set_provision_state(uuid_, 'manage', 'manageable')
        ironic.delete_node(uuid_)


def test_ironic_inspects_a_node_with_its_agent_interface_and_applies_a_rule(
        inspecting_ironic, node):
    rule = inspecting_ironic.create_rule({
        'description': 'smoke', 'conditions': [
            {'op': 'eq', 'args': {
                'values': ['{inventory[cpu][architecture]}', 'x86_64']}}],
        'actions': ACTIONS})
    assert [r['uuid'] for r in inspecting_ironic.rules()] == [rule['uuid']]
    assert (rule['phase'], rule['priority']) == ('main', 0)

    inspected = inspecting_ironic.inspect(
        node, ramdisk.ipa_payload(MACS, bmc_address=BMC))

    assert inspected['provision_state'] == 'manageable'
    assert inspected['inspect_interface'] == 'agent'
    properties = inspected['properties']
    assert properties['rule_hit'] == 'yes'
    assert inspecting_ironic.traits(node) == ['CUSTOM_RULED']
    # What the hooks set: architecture, cpus, memory, root-device (local_gb:
    # 100 GiB less the 1 GiB of partitioning spacing) and boot-mode (the
    # ramdisk's current boot mode), before the rule ran; set-capability
    # appends to the capabilities, keeping the hook's boot_mode.
    assert {k: properties[k] for k in (
        'cpu_arch', 'cpus', 'memory_mb', 'local_gb', 'capabilities')} == {
        'cpu_arch': 'x86_64', 'cpus': 4, 'memory_mb': 8192, 'local_gb': 99,
        'capabilities': 'boot_mode:bios,boot_mode:uefi'}
    assert 'boot_mode:uefi' in properties['capabilities'].split(',')
    assert sorted((p['address'], p['pxe_enabled'])
                  for p in inspecting_ironic.ports(node)) == [
        (MACS[0], True), (MACS[1], False)]


def test_ironic_fails_inspecting_on_a_condition_with_a_list_of_args(
        inspecting_ironic, node):
    """The deprecated list form of ``args`` maps the list onto the
    operator's arguments in order: ``eq``'s ``values`` gets the first
    item alone (and ``force_strings`` the second), which Ironic accepts
    when the rule is created and fails the inspection on."""
    inspecting_ironic.create_rule({'conditions': [
        {'op': 'eq', 'args': ['{inventory[cpu][architecture]}', 'x86_64']}],
        'actions': ACTIONS})

    with pytest.raises(RuntimeError, match="Expected list for 'values'"):
        inspecting_ironic.inspect(node, ramdisk.ipa_payload(
            MACS, bmc_address=BMC))

    failed = inspecting_ironic.get_node(node)
    assert failed['provision_state'] == 'inspect failed'
    assert 'rule_hit' not in failed['properties']
    assert inspecting_ironic.traits(node) == []
