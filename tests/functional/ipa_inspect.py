"""Run the real ironic-python-agent's inspection once, as its ramdisk
does after boot: its own collectors inventory this machine and its own
``call_inspector`` posts the data to the callback URL (with its own
retries). Run by the Python of a venv holding PyPI's
ironic-python-agent (``tests/functional/ipa.py`` starts it).

    python ipa_inspect.py CALLBACK_URL [COLLECTORS]

Prints the node UUID the inspector answered with.
"""

import sys

from ironic_python_agent import config
from ironic_python_agent import inspector
from oslo_config import cfg
from oslo_log import log


def main(callback_url, collectors='default,logs'):
    conf = cfg.CONF
    log.register_options(conf)
    config.populate_config()
    conf([], project='ironic-python-agent')
    log.setup(conf, 'ironic-python-agent')
    conf.set_override('inspection_callback_url', callback_url)
    conf.set_override('inspection_collectors', collectors)
    # NOTE: no DHCP to wait for: this machine's address is static.
    conf.set_override('inspection_dhcp_wait_timeout', 0)
    print(inspector.inspect(), flush=True)


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
