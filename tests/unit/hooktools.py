"""Helpers of the processing hook tests: a recording stand-in for the
Ironic facade (``inspector_ha.ironic.client.Ironic``) and a configuration.

The recorder keeps nodes and ports in dictionaries, records every call in
``calls`` and answers reads from what it holds; the functional tests run
the same code against a real Ironic.
"""

import threading
import types
import uuid as uuidlib

from oslo_config import cfg

from inspector_ha import conf as conf_mod
from inspector_ha.conf import opts
from inspector_ha.ironic import client
from inspector_ha.processing import base
from inspector_ha.processing import changes

UUID = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'


class RecordingIronic:
    def __init__(self):
        self.calls = []
        self.nodes = {}
        self.ports_by_id = {}
        self.refuse_port_patches = False

    # --- what the tests set up ----------------------------------------

    def add_node(self, uuid=UUID, driver_info=None, **fields):
        self.nodes[uuid] = types.SimpleNamespace(
            id=uuid, driver_info=driver_info or {}, **fields)
        return uuid

    def add_port(self, node_uuid, address, local_link_connection=None,
                 physical_network=None, pxe_enabled=True):
        port_id = str(uuidlib.uuid4())
        self.ports_by_id[port_id] = dict(
            node=node_uuid, port=client.Port(
                port_id, address.lower(), local_link_connection or {},
                physical_network, pxe_enabled))
        return port_id

    def written(self, name):
        return [c[1:] for c in self.calls if c[0] == name]

    # --- the facade's calls -------------------------------------------

    def discover(self):
        """Nothing to read: the facade's version discovery at start."""
        thread = threading.Thread(target=lambda: None)
        thread.start()
        return thread

    def patch_node(self, uuid, patch, reset_interfaces=None):
        if patch:
            self.calls.append(('patch_node', uuid, list(patch)))

    def create_port(self, uuid, address, pxe_enabled=True, extra=None):
        self.calls.append(('create_port', uuid, address, pxe_enabled))
        return self.add_port(uuid, address, pxe_enabled=pxe_enabled)

    def add_trait(self, uuid, name):
        self.calls.append(('add_trait', uuid, name))

    def remove_trait(self, uuid, name):
        self.calls.append(('remove_trait', uuid, name))

    def get_node(self, uuid, fields=None):
        self.calls.append(('get_node', uuid))
        return self.nodes[uuid]

    def delete_port(self, port_id):
        self.calls.append(('delete_port', port_id))
        self.ports_by_id.pop(port_id, None)

    def ports(self, uuid):
        self.calls.append(('ports', uuid))
        return [p['port'] for p in self.ports_by_id.values()
                if p['node'] == uuid]

    def patch_port(self, port_id, patch):
        self.calls.append(('patch_port', port_id, list(patch)))
        if self.refuse_port_patches:
            raise client.BadRequest('refused by the test')

    def port_owner(self, address):
        self.calls.append(('port_owner', address))
        for port_id, entry in self.ports_by_id.items():
            if entry['port'].address == address.lower():
                return port_id, entry['node']
        return None

    def nodes_with_driver_info(self):
        self.calls.append(('nodes_with_driver_info',))
        return list(self.nodes.values())

    def create_node(self, **attrs):
        self.calls.append(('create_node', dict(attrs)))
        uuid = attrs.pop('id', None) or str(uuidlib.uuid4())
        return self.nodes.setdefault(uuid, types.SimpleNamespace(
            id=uuid, **attrs))

    def delete_node(self, uuid):
        self.calls.append(('delete_node', uuid))
        self.nodes.pop(uuid, None)


def context(ironic, properties=None, extra=None, known_macs=(),
            provision_state='manageable'):
    """A NodeContext on a node with these properties and extra."""
    node = types.SimpleNamespace(id=UUID, properties=properties or {},
                                 extra=extra or {},
                                 provision_state=provision_state)
    return base.NodeContext(ironic, node, known_macs)


def patched(ironic):
    """``{path: value}`` of every node patch operation sent, in order."""
    return {op['path']: op.get('value') for call in ironic.calls
            if call[0] == 'patch_node' for op in call[2]}


def send(ironic, ctx):
    """Send what ``ctx`` collected, as a worker does."""
    changes.apply(ironic, ctx.uuid, ctx.changes())


def run(hook, data, ironic=None, **node):
    """Run ``hook.before_update`` on a fresh context, send its changes as
    a worker does; return the recording Ironic."""
    ironic = ironic or RecordingIronic()
    ctx = context(ironic, **node)
    hook.before_update(data, ctx)
    send(ironic, ctx)
    return ironic


def new_conf():
    """A private ConfigOpts with every option registered (each installed
    plugin's and hook's too), no files read."""
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    for group, options in opts.list_opts():
        conf.register_opts(options, group=group)
    conf([], project='inspector-ha', default_config_files=[])
    return conf
