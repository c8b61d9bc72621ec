"""A real HAProxy in front of the API processes, round robin."""

import shutil
import subprocess
import tempfile

import backends

CONFIG = '''global
    maxconn 4096
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    option forwardfor
frontend inspector
    bind 127.0.0.1:{port}
    default_backend apis
backend apis
    balance roundrobin
{servers}
'''


class HAProxy:
    def __init__(self, api_urls):
        self.port = backends.free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self._dir = tempfile.mkdtemp(prefix='haproxy-')
        servers = '\n'.join('    server api%d %s check inter 1s' % (
            i, url.split('//', 1)[1]) for i, url in enumerate(api_urls))
        self._conf = '%s/haproxy.cfg' % self._dir
        with open(self._conf, 'w') as conf:
            conf.write(CONFIG.format(port=self.port, servers=servers))
        self._proc = None

    def start(self):
        binary = shutil.which('haproxy') or '/usr/sbin/haproxy'
        self._proc = subprocess.Popen([binary, '-db', '-f', self._conf],
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
