"""``[pxe_filter] driver = example_file``: a PXE filter driver outside
inspector-ha's tree. It filters nothing: it writes the state it is given
as JSON to ``[example_pxe_filter] state_file``, an option group of its
own (so it needs no root). A real driver changes the host's firewall the
same way, from the same calls."""

import json
import os

from oslo_config import cfg

from inspector_ha.firewall import base

GROUP = 'example_pxe_filter'
OPTS = [
    cfg.StrOpt('state_file',
               default='/var/lib/inspector-ha/example-pxe-filter.json',
               help='File the example_file PXE filter driver writes the '
                    'applied filter state to, as JSON.'),
]


class FileDriver(base.Driver):
    """The state as JSON in ``[example_pxe_filter] state_file``."""

    group, opts = GROUP, OPTS

    def __init__(self, conf, runner):
        super().__init__(conf, runner)  # registers [example_pxe_filter]
        self.path = conf.example_pxe_filter.state_file

    def init(self):
        self.apply(base.CLOSED)

    def apply(self, state):
        self.applied = None
        self._write(state)
        self.applied = state

    def block(self):
        self.applied = None
        self._write(base.CLOSED)

    def _write(self, state):
        white = base.clean_macs(state.whitelist) if state.is_open else []
        text = json.dumps({
            'interface': self.interface,
            'dhcp_ports': list(base.dhcp_ports(self.conf)),
            'open': state.is_open, 'open_for': state.open_for,
            'whitelist': white,
            'blacklist': base.clean_macs(state.blacklist),
            'deny_unknown': state.deny_unknown}, indent=1)
        tmp = self.path + '.tmp'
        with open(tmp, 'w') as out:
            out.write(text)
        os.replace(tmp, self.path)  # whole, as a firewall transaction
