"""A real Keystone (PyPI ``keystone``, SQLite, fernet tokens) served by
gunicorn on loopback, and the identities and catalog the tests use.

Runs from the venv at ``INSPECTOR_HA_KEYSTONE_VENV`` (default
``<repo>/.venv-keystone``, made by ``tools/install-test-deps.sh``).
Plain helpers, no pytest in here.
"""

import os
import pathlib
import subprocess

from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import openstack
import requests

from backends import (BackendUnavailable, INSTALL_HINT, REPO_ROOT, answers,
                      free_port)
from servers import Server, terminate

PASSWORD = 'secret-%s' % os.getpid()
DOMAIN = 'Default'
#: The region whose catalog holds the real services; REGION_ONE's
#: endpoints lead nowhere, so a client that ignores its region fails.
REGION = 'RegionTwo'
REGION_ONE = 'RegionOne'
KEYSTONE_CONF = """\
[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///{tmpdir}/keystone.sqlite
[token]
provider = fernet
expiration = {expiration}
[fernet_tokens]
key_repository = {tmpdir}/fernet-keys
[fernet_receipts]
key_repository = {tmpdir}/fernet-keys
[credential]
key_repository = {tmpdir}/credential-keys
"""
GUNICORN_CONF = """\
import sys
sys.argv[1:] = []
bind = '127.0.0.1:{port}'
workers = 2
wsgi_app = 'keystone.wsgi.api:application'
"""


class Keystone(Server):
    """Keystone's public API at :attr:`url` (``/v3``); ``admin`` holds
    the admin role on project ``admin`` and on the system."""

    name = 'keystone'
    start_timeout = 60

    def __init__(self, port=None, venv=None):
        super().__init__(port)
        self.venv = pathlib.Path(venv or os.environ.get(
            'INSPECTOR_HA_KEYSTONE_VENV', REPO_ROOT / '.venv-keystone'))
        self.issuers = []

    @property
    def url(self):
        return f'http://127.0.0.1:{self.port}/v3'

    def _write_conf(self, name, expiration):
        path = self.tmpdir / name
        path.write_text(KEYSTONE_CONF.format(tmpdir=self.tmpdir,
                                             expiration=expiration))
        return path

    def _manage(self, *args):
        proc = subprocess.run(
            [str(self.venv / 'bin' / 'keystone-manage'), '--config-file',
             str(self.tmpdir / 'keystone.conf'), *args], cwd=self.tmpdir,
            capture_output=True, text=True, timeout=180, check=False)
        if proc.returncode:
            raise BackendUnavailable(f'Keystone: keystone-manage {args[0]} '
                                     f'failed:\n{proc.stderr[-3000:]}')

    def _launch(self, timeout):
        if not (self.venv / 'bin' / 'keystone-manage').exists():
            raise BackendUnavailable(
                f'Keystone: no {self.venv}/bin/keystone-manage; set '
                f'INSPECTOR_HA_KEYSTONE_VENV {INSTALL_HINT}')
        self._write_conf('keystone.conf', 3600)
        if not (self.tmpdir / 'keystone.sqlite').exists():
            self._manage('db_sync')
            for setup in ('fernet_setup', 'credential_setup'):
                self._manage(setup, '--keystone-user', 'root',
                             '--keystone-group', 'root')
            self._manage('bootstrap', '--bootstrap-password', PASSWORD,
                         '--bootstrap-region-id', REGION_ONE,
                         '--bootstrap-public-url', self.url,
                         '--bootstrap-internal-url', self.url)
        self._serve(self.port, 'keystone.conf', self.log_path)
        self._wait_ready(lambda: answers(self.url), timeout)

    def _serve(self, port, conf_name, log_path):
        # NOTE: Keystone's WSGI module parses sys.argv as its own command
        # line, so gunicorn takes everything from a file that empties it.
        settings = self.tmpdir / f'gunicorn-{port}.py'
        settings.write_text(GUNICORN_CONF.format(port=port))
        env = dict(os.environ, OS_KEYSTONE_CONFIG_FILES=str(
            self.tmpdir / conf_name))
        argv = [str(self.venv / 'bin' / 'gunicorn'), '-c', str(settings)]
        if port == self.port:
            self._spawn(argv, env=env, cwd=self.tmpdir)
            return self.proc
        with open(log_path, 'ab') as log:
            return subprocess.Popen(argv, env=env, cwd=self.tmpdir,
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def issuer(self, expiration):
        """The URL of a second Keystone on the same database and keys
        whose tokens expire after ``expiration`` seconds: a token it
        issues is valid everywhere until then."""
        port = free_port()
        self._write_conf('short.conf', expiration)
        proc = self._serve(port, 'short.conf', self.tmpdir / 'short.log')
        self.issuers.append(proc)
        url = f'http://127.0.0.1:{port}/v3'
        self._wait_ready(lambda: answers(url), self.start_timeout)
        return url

    def stop(self, grace=10):
        for proc in self.issuers:
            terminate(proc, grace)
        super().stop(grace)


#: Users of project ``ops`` (or the system) and the roles each holds,
#: as upstream's policy names them; ``nobody`` has a role no rule names.
USERS = {'alice': ('ops', 'admin'), 'bob': ('ops', 'member'),
         'carol': ('ops', 'reader'), 'dave': ('ops', 'other'),
         'inspector': ('service', 'service'), 'ironic': ('service', 'service'),
         'sysreader': ('system', 'reader')}


class Site:
    """Keystone's identities and catalog for a site: each of
    :data:`USERS`, and ``baremetal`` (Ironic) and
    ``baremetal-introspection`` (inspector-ha) with endpoints in two
    regions, the real ones in :data:`REGION` only."""

    def __init__(self, keystone):
        self.keystone = keystone
        # NOTE: Keystone's own endpoint is in REGION_ONE (bootstrap's).
        self.admin = openstack.connect(**dict(self.auth('admin', 'admin'),
                                              region_name=REGION_ONE))
        self._make_users()

    def auth(self, user, project):
        """openstacksdk/keystoneauth password settings for ``user``
        scoped to ``project`` (``system`` for the system)."""
        auth = {'auth_url': self.keystone.url, 'username': user,
                'password': PASSWORD, 'user_domain_name': DOMAIN}
        if project == 'system':
            auth['system_scope'] = 'all'
        else:
            auth.update(project_name=project, project_domain_name=DOMAIN)
        return {'auth': auth, 'region_name': REGION, 'auth_type': 'password'}

    def _make_users(self):
        identity = self.admin.identity
        for name in ('ops', 'service'):
            identity.create_project(name=name, domain_id='default')
        identity.create_role(name='other')
        for name, (project, role) in USERS.items():
            user = identity.create_user(name=name, password=PASSWORD,
                                        domain_id='default')
            role_id = identity.find_role(role, ignore_missing=False).id
            if project == 'system':
                identity.assign_system_role_to_user(user, role_id, 'all')
            else:
                identity.assign_project_role_to_user(
                    identity.find_project(project, ignore_missing=False),
                    user, role_id)

    def register(self, service_type, real_url, interface='public'):
        """Endpoints of ``service_type``: ``real_url`` for ``interface``
        in :data:`REGION`; a closed port for every other interface and
        region (a client that picks the wrong one is refused)."""
        identity = self.admin.identity
        if identity.find_region(REGION) is None:
            identity.create_region(id=REGION)
        service = identity.create_service(type=service_type,
                                          name=service_type)
        nowhere = 'http://127.0.0.1:%d' % free_port()
        for region in (REGION_ONE, REGION):
            for face in ('public', 'internal'):
                url = real_url if (region, face) == (REGION,
                                                     interface) else nowhere
                identity.create_endpoint(service_id=service.id,
                                         interface=face, region_id=region,
                                         url=url)

    def token(self, user, project=None, auth_url=None):
        """A new token of ``user`` (scoped to its project of
        :data:`USERS`, or ``project``), from ``auth_url`` (by default
        the Keystone every service validates at)."""
        scope = project or USERS.get(user, ('admin',))[0]
        settings = self.auth(user, scope)['auth']
        settings['auth_url'] = auth_url or self.keystone.url
        return v3.Password(**settings).get_token(ks_session.Session())

    def revoke(self, token):
        resp = requests.delete(self.keystone.url + '/auth/tokens', timeout=10,
                               headers={'X-Auth-Token': self.token('admin'),
                                        'X-Subject-Token': token})
        assert resp.status_code == 204, resp.text

    def service_conf(self, user):
        """keystoneauth options of ``user`` (in project ``service``), as
        a section of inspector-ha's configuration file takes them."""
        return {'auth_type': 'password', 'auth_url': self.keystone.url,
                'username': user, 'password': PASSWORD,
                'project_name': 'service', 'user_domain_name': DOMAIN,
                'project_domain_name': DOMAIN}
