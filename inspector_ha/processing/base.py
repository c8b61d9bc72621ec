"""The processing hook interface (entry points
``inspector_ha.hooks.processing``)."""


class HookError(Exception):
    """A hook refuses the data; the introspection fails with this text."""


class ProcessingHook:
    """Base of processing hooks; both phases are optional.

    ``before_processing(data)`` runs in the API process before lookup and
    must not call Ironic; ``before_update(data, node)`` runs in a worker,
    in ``processing``, with a :class:`NodeContext`.
    """

    dependencies = ()

    def __init__(self, conf):
        self.conf = conf

    def before_processing(self, data):
        pass

    def before_update(self, data, node):
        pass


class NodeContext:
    """What a hook may see and change of the Ironic node.

    Property changes are collected and sent as one PATCH, and ports are
    created only for MACs Ironic does not have yet, to keep the number of
    Ironic calls per introspection low.
    """

    def __init__(self, ironic, node, known_macs):
        self.uuid = node.id
        self.node = node
        self.known_macs = set(known_macs)
        self.patches = []
        self._ironic = ironic

    @property
    def properties(self):
        return self.node.properties or {}

    def set_property(self, name, value, overwrite=True):
        if not overwrite and name in self.properties:
            return
        self.patches.append({'op': 'add', 'path': '/properties/' + name,
                             'value': value})

    def create_port(self, mac, pxe_enabled):
        if mac.lower() in self.known_macs:
            return
        self._ironic.create_port(self.uuid, mac, pxe_enabled=pxe_enabled)
        self.known_macs.add(mac.lower())

    def commit(self):
        self._ironic.patch_node(self.uuid, self.patches)
        self.patches = []
