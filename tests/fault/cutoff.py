"""A host that can be cut off the network: a network namespace joined to
the root one by a veth pair, its backends reached through proxies that
listen on the root side's address (TEST-NET-3, 203.0.113.0/24, on the
veth only) and forward to their loopback ports.

:meth:`CutOff.cut` takes the root side's link down, as a pulled cable
does: the processes in the namespace keep running, their TCP
connections stay established and nothing flows either way;
:meth:`CutOff.heal` brings it up and TCP retransmits what waited.

    with CutOff({'rabbit': 5672, ...}) as cut:
        url = cut.address(5672)    # '203.0.113.x:<proxy port>'
        cut.prefix                 # ['ip', 'netns', 'exec', <ns>]
"""

import pathlib
import random
import subprocess
import uuid

import backends
import netns
import proxy as proxy_mod


def _ip(*argv):
    subprocess.run(['ip', *argv], check=True, capture_output=True,
                   timeout=30)


class CutOff:
    def __init__(self, ports):
        netns.check_available()
        tag = uuid.uuid4().hex[:6]
        self.ns = 'cut-%s' % tag
        self._root, self._inside = 'cr%s' % tag, 'ci%s' % tag
        base = 4 * random.randrange(64)
        self._gateway = '203.0.113.%d' % (base + 1)
        self._address = '203.0.113.%d' % (base + 2)
        self.prefix = ['ip', 'netns', 'exec', self.ns]
        self._ports = list(ports)
        self._proxies = {}

    def start(self):
        _ip('netns', 'add', self.ns)
        _ip('link', 'add', self._root, 'type', 'veth', 'peer', 'name',
            self._inside)
        _ip('link', 'set', self._inside, 'netns', self.ns)
        _ip('addr', 'add', self._gateway + '/30', 'dev', self._root)
        _ip('link', 'set', self._root, 'up')
        _ip('-n', self.ns, 'addr', 'add', self._address + '/30', 'dev',
            self._inside)
        _ip('-n', self.ns, 'link', 'set', 'lo', 'up')
        _ip('-n', self.ns, 'link', 'set', self._inside, 'up')
        _ip('-n', self.ns, 'route', 'add', 'default', 'via', self._gateway)
        for port in self._ports:
            self._proxies[port] = proxy_mod.Proxy(
                port, listen_host=self._gateway).start()
        return self

    def address(self, port):
        """``host:port`` at which the namespace reaches loopback ``port``."""
        return '%s:%d' % (self._gateway, self._proxies[port].port)

    def url(self, url):
        """``url`` (naming ``127.0.0.1:<port>`` of a proxied port) as the
        namespace reaches it."""
        for port in self._proxies:
            loopback = '127.0.0.1:%d' % port
            if loopback in url:
                return url.replace(loopback, self.address(port))
        raise AssertionError('no proxied port in %s' % url)

    def cut(self):
        _ip('link', 'set', self._root, 'down')

    def heal(self):
        _ip('link', 'set', self._root, 'up')
        backends.wait_for(self._up, 30, interval=0.1,
                          message='the namespace is still cut off')

    def _up(self):
        state = pathlib.Path('/sys/class/net/%s/operstate' % self._root)
        return state.read_text().strip() == 'up'

    def close(self):
        for proxy in self._proxies.values():
            proxy.close()
        subprocess.run(['ip', 'netns', 'del', self.ns], capture_output=True)
        subprocess.run(['ip', 'link', 'del', self._root],
                       capture_output=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.close()
