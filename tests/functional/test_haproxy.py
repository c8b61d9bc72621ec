"""The shipped HAProxy file (etc/haproxy/inspector-ha.cfg): valid, checks
/healthcheck as documented, and lets /v1/continue in only from the
provisioning networks."""

import shutil
import subprocess

import pytest
import requests

import haproxy

pytestmark = pytest.mark.skipif(shutil.which('haproxy') is None and
                                not haproxy.pathlib.Path(
                                    '/usr/sbin/haproxy').exists(),
                                reason='haproxy is not installed')
BINARY = shutil.which('haproxy') or '/usr/sbin/haproxy'


def test_the_shipped_file_is_valid_as_shipped():
    result = subprocess.run([BINARY, '-c', '-f', haproxy.SHIPPED],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_shipped_file_checks_healthcheck_2s_apart_3_falls_2_rises():
    text = haproxy.SHIPPED.read_text()
    for line in ('option httpchk GET /healthcheck',
                 'http-check expect status 200',
                 'default-server inter 2s fall 3 rise 2'):
        assert '    %s\n' % line in text


def test_continue_from_outside_the_provisioning_networks_is_403():
    proxy = haproxy.HAProxy(['http://127.0.0.1:9'],
                            provisioning=['192.0.2.0/24']).start()
    try:
        assert requests.post(proxy.url + '/v1/continue', json={},
                             timeout=10).status_code == 403
        # Everything else is passed on (to no server here: 503).
        assert requests.get(proxy.url + '/v1', timeout=10).status_code \
            == 503
    finally:
        proxy.stop()


def test_continue_from_a_provisioning_network_is_passed_on():
    proxy = haproxy.HAProxy(['http://127.0.0.1:9']).start()
    try:
        assert requests.post(proxy.url + '/v1/continue', json={},
                             timeout=10).status_code == 503
    finally:
        proxy.stop()
