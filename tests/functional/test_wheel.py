"""The built wheel, installed (not editable) into a fresh virtualenv the
way an operator or a package build would: its console scripts create the
schema on SQLite and PostgreSQL and the all-in-one serves the API."""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import venv
import zipfile

import pytest

import backends
import servers
import serving

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(argv, **kwargs):
    result = subprocess.run([str(a) for a in argv], capture_output=True,
                            text=True, timeout=900, **kwargs)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[
        -4000:]
    return result.stdout


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    """``(bin directory, wheel)`` of a fresh venv holding the wheel."""
    tmp = tmp_path_factory.mktemp('wheel')
    # NOTE: from a clean copy: setuptools' build/ in the checkout may hold
    # files deleted since, which would end up in the wheel.
    source = tmp / 'source'
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        '.git', '.venv*', 'build', '*.egg-info', '__pycache__'))
    _run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '-w',
          tmp / 'dist', source])
    wheel, = (tmp / 'dist').glob('inspector_ha-*.whl')
    venv.create(tmp / 'venv', with_pip=True)
    _run([tmp / 'venv' / 'bin' / 'pip', 'install', wheel,
          'psycopg2-binary'], cwd=tmp)
    return tmp / 'venv' / 'bin', wheel


def test_the_wheel_carries_the_migrations_and_the_api_description(
        installed):
    names = zipfile.ZipFile(installed[1]).namelist()
    assert 'inspector_ha/migrations/env.py' in names
    assert 'inspector_ha/migrations/script.py.mako' in names
    assert any(re.match(r'inspector_ha/migrations/versions/\w+\.py$', n)
               for n in names)
    assert 'inspector_ha/api/openapi.yaml' in names


def test_the_installed_package_is_the_wheel_not_this_checkout(
        installed, tmp_path):
    out = _run([installed[0] / 'python', '-c',
                'import inspector_ha; print(inspector_ha.__file__)'],
               cwd=tmp_path)
    assert 'site-packages' in out and str(ROOT) not in out


@pytest.mark.parametrize('backend', ['sqlite', 'postgresql'])
def test_dbsync_from_the_wheel_creates_the_schema(installed, tmp_path,
                                                  backend, request):
    url = ('sqlite:///%s/db.sqlite' % tmp_path if backend == 'sqlite'
           else request.getfixturevalue('pg_url'))
    conf = tmp_path / 'inspector-ha.conf'
    conf.write_text('[database]\nconnection = %s\n' % url)
    dbsync = installed[0] / 'inspector-ha-dbsync'
    head = _run([dbsync, '--config-file', conf, 'upgrade'],
                cwd=tmp_path).strip()
    assert head and _run([dbsync, '--config-file', conf, 'version'],
                         cwd=tmp_path).strip() == head


def test_the_all_in_one_from_the_wheel_answers_and_stops_cleanly(
        installed, tmp_path, ironic):
    env = dict(os.environ, INSPECTOR_HA_STATE=str(tmp_path / 'state'),
               INSPECTOR_HA_IRONIC_URL=ironic.url,
               OS_DEFAULT__LISTEN_PORT=str(backends.free_port()),
               OS_API__DRAIN_TIME='0')
    env.pop('INSPECTOR_HA_CONFIG_FILE', None)
    log = open(tmp_path / 'aio.log', 'w+')
    proc = subprocess.Popen([installed[0] / 'inspector-ha'], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=log, text=True)
    try:
        line = proc.stdout.readline()
        match = re.search(r'listening on (http://\S+?)/?$', line.strip())
        assert match, line + servers.log_tail(tmp_path / 'aio.log')
        url = match.group(1)
        resp = backends.wait_for(lambda: serving.get(url + '/'), 60)
        assert resp.json()['versions'][0]['id'] == '1.18'
        assert serving.get(url + '/healthcheck').status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
