"""A real HAProxy in front of the API processes, with the shipped
configuration (etc/haproxy/inspector-ha.cfg): only the bind address, the
provisioning networks and the servers are filled in."""

import csv
import io
import pathlib
import re
import shutil
import subprocess
import tempfile

import requests

import backends
import needs

SHIPPED = (pathlib.Path(__file__).resolve().parents[2] / 'etc' / 'haproxy'
           / 'inspector-ha.cfg')


def binary():
    """HAProxy's executable (Debian's is in /usr/sbin, which a user's PATH
    may leave out)."""
    installed = pathlib.Path('/usr/sbin/haproxy')
    if shutil.which('haproxy') is None and installed.exists():
        return str(installed)
    return needs.tool('haproxy', 'haproxy')


def configure(text, port, api_urls, provisioning, health_path=None):
    """The shipped file with our ports; each line must be found once.
    ``health_path`` replaces the checked path (``/`` while APIs of
    0.1.0, which has no ``/healthcheck``, are behind it)."""
    servers = ''.join('    server api%d %s check\n' % (
        i, url.split('//', 1)[1]) for i, url in enumerate(api_urls))
    for pattern, new in (
            (r'^    log /dev/log .*$', '    log stderr format raw local0'),
            (r'^    bind .*$', '    bind 127.0.0.1:%d' % port),
            (r'^    acl provisioning src .*$',
             '    acl provisioning src %s' % ' '.join(provisioning)),
            (r'^(    server .*\n)+', servers)):
        text, count = re.subn(pattern, new, text, flags=re.M)
        assert count == 1, 'the shipped HAProxy file has no %r' % pattern
    if health_path is not None:
        text, count = re.subn(r'^(    option httpchk GET) /healthcheck$',
                              r'\1 ' + health_path, text, flags=re.M)
        assert count == 1, 'the shipped HAProxy file checks no /healthcheck'
    return text


STATS = '''
listen stats
    bind 127.0.0.1:%d
    stats enable
    stats uri /stats
'''


class HAProxy:
    """The shipped configuration, plus (for the tests only) a stats page
    telling which servers HAProxy sees up."""

    def __init__(self, api_urls, provisioning=('127.0.0.0/8',),
                 health_path=None, port=None):
        self._binary = binary()
        self.port = port or backends.free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self._stats = 'http://127.0.0.1:%d/stats;csv' % backends.free_port()
        self._dir = tempfile.mkdtemp(prefix='haproxy-')
        self._conf = '%s/haproxy.cfg' % self._dir
        with open(self._conf, 'w') as conf:
            conf.write(configure(SHIPPED.read_text(), self.port, api_urls,
                                 provisioning, health_path))
            conf.write(STATS % int(self._stats.split(':')[2].split('/')[0]))
        self._proc = None

    def _servers(self):
        rows = csv.DictReader(io.StringIO(requests.get(
            self._stats, timeout=10).text.lstrip('# ')))
        return [r for r in rows if r['pxname'] == 'inspector-ha-api'
                and r['svname'] not in ('FRONTEND', 'BACKEND')]

    def server_states(self):
        """``{server name: status}`` (UP, DOWN, "UP 1/2", ...)."""
        return {r['svname']: r['status'] for r in self._servers()}

    def retries(self):
        """Requests HAProxy had to retry or send elsewhere because a
        server refused or dropped them (0 when every stop drained)."""
        return sum(int(r['wretr'] or 0) + int(r['wredis'] or 0)
                   for r in self._servers())

    def all_up(self):
        states = self.server_states()
        return bool(states) and set(states.values()) == {'UP'}

    def start(self):
        self._proc = subprocess.Popen([self._binary, '-db', '-f', self._conf],
                                      stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        backends.wait_for(lambda: backends.port_open('127.0.0.1',
                                                     self.port), 10)
        return self

    def stop(self):
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)
        shutil.rmtree(self._dir, ignore_errors=True)
