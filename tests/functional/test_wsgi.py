"""``inspector_ha.wsgi:application`` under another WSGI server (the
standard library's wsgiref), configured by INSPECTOR_HA_CONFIG_FILE."""

import os
import subprocess
import sys

import requests

import backends
import servers

SERVE = ('import sys; from wsgiref import simple_server; '
         'from inspector_ha.wsgi import application; '
         'simple_server.make_server("127.0.0.1", int(sys.argv[1]), '
         'application).serve_forever()')


def _configure(tmp_path, ironic):
    conf = tmp_path / 'api.conf'
    conf.write_text(
        '[DEFAULT]\ntransport_url = fake:/\nstate_path = %s\n'
        'auth_strategy = noauth\n'
        '[database]\nconnection = sqlite:///%s/db.sqlite\n'
        '[coordination]\nbackend_url = file://%s/coord\n'
        '[ironic]\nauth_type = none\nendpoint_override = %s\n' % (
            tmp_path, tmp_path, tmp_path, ironic.url))
    subprocess.run([sys.executable, '-m', 'inspector_ha.cmd.dbsync',
                    '--config-file', conf, 'upgrade'], check=True,
                   capture_output=True)
    return conf


def test_the_wsgi_application_serves_the_api_under_wsgiref(tmp_path,
                                                            ironic):
    conf = _configure(tmp_path, ironic)
    port = backends.free_port()
    env = dict(os.environ, INSPECTOR_HA_CONFIG_FILE=str(conf))
    proc = subprocess.Popen([sys.executable, '-c', SERVE, str(port)],
                            env=env, stderr=subprocess.DEVNULL)
    url = 'http://127.0.0.1:%d' % port
    try:
        backends.wait_for(lambda: _get(url + '/'), 30)
        resp = _get(url + '/v1/introspection/'
                    'c8b1e7a2-3f0a-4b9e-9d55-2f3d6a1b7e10')
        assert resp.status_code == 404
        assert 'in cache' in resp.json()['error']['message']
        assert _get(url + '/').json()['versions'][0]['id'] == '1.18'
    finally:
        proc.terminate()
        proc.wait(10)


def _get(url):
    try:
        return requests.get(url, timeout=5)
    except requests.RequestException:  # refused, or workers still booting
        return None


def test_the_wsgi_application_serves_the_api_under_gunicorn_with_two_workers(  # noqa: E501
        tmp_path, ironic):
    conf = _configure(tmp_path, ironic)
    port = backends.free_port()
    env = dict(os.environ, INSPECTOR_HA_CONFIG_FILE=str(conf))
    log = open(tmp_path / 'gunicorn.log', 'wb')
    proc = subprocess.Popen(
        [sys.executable, '-m', 'gunicorn', '--workers', '2', '--bind',
         '127.0.0.1:%d' % port, 'inspector_ha.wsgi:application'],
        env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d' % port
    try:
        backends.wait_for(lambda: _get(url + '/'), 60,
                          message=servers.log_tail(tmp_path /
                                                     'gunicorn.log'))
        for _ in range(10):
            assert _get(url + '/').json()['versions'][0]['id'] == '1.18'
        assert _get(url + '/healthcheck').status_code == 200
        assert _get(url + '/v1/introspection/'
                    'c8b1e7a2-3f0a-4b9e-9d55-2f3d6a1b7e10').status_code \
            == 404
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
