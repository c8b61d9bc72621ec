"""ironic-inspector 12.5, the real upstream service, standalone.

Runs from the venv at ``INSPECTOR_HA_INSPECTOR_VENV`` (default
``<repo>/.venv-inspector-12.5``, made by ``tools/install-test-deps.sh``):
noauth, in-process messaging (``fake://``), no PXE filter, no delay
between power-ons, data stored in its database, against a real Ironic.
Tests and benchmarks share it through this module.
"""

import os
import pathlib
import subprocess

import requests

import backends
import servers

VERSION = '12.5'

CONF = """\
[DEFAULT]
auth_strategy = noauth
transport_url = fake://
listen_address = 127.0.0.1
listen_port = {port}
introspection_delay = 0
enable_mdns = false
timeout = {timeout}
use_stderr = true
debug = {debug}
[database]
connection = {database}
[ironic]
auth_type = none
endpoint_override = {ironic}
[processing]
store_data = database
[pxe_filter]
driver = noop
"""


class Inspector(servers.Server):
    """``ironic-inspector`` (API and conductor in one process).

    :param database: SQLAlchemy URL (SQLite file or MariaDB).
    :param ironic_url: the Ironic it drives.
    """

    name = 'ironic-inspector'

    def __init__(self, database, ironic_url, timeout=3600, venv=None,
                 extra_conf='', debug=False):
        super().__init__()
        self.database = database
        self.venv = pathlib.Path(venv or os.environ.get(
            'INSPECTOR_HA_INSPECTOR_VENV',
            backends.REPO_ROOT / ('.venv-inspector-' + VERSION)))
        self.conf_path = self.tmpdir / 'ironic-inspector.conf'
        self.conf_path.write_text(CONF.format(
            port=self.port, timeout=timeout, database=database,
            ironic=ironic_url, debug=str(debug).lower()) + extra_conf)

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.port

    def _bin(self, name):
        path = self.venv / 'bin' / name
        if not path.exists():
            raise backends.BackendUnavailable(
                'ironic-inspector %s: no %s; set INSPECTOR_HA_INSPECTOR_VENV '
                '%s' % (VERSION, path, backends.INSTALL_HINT))
        return str(path)

    def dbsync(self):
        proc = subprocess.run(
            [self._bin('ironic-inspector-dbsync'), '--config-file',
             str(self.conf_path), 'upgrade'], cwd=self.tmpdir,
            capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode:
            raise backends.BackendUnavailable(
                'ironic-inspector-dbsync upgrade failed:\n%s' %
                proc.stderr[-3000:])
        return self

    start_timeout = 60

    def _launch(self, timeout):
        self._spawn([self._bin('ironic-inspector'), '--config-file',
                     str(self.conf_path)], cwd=self.tmpdir)
        self._wait_ready(self._answers, timeout)

    def _answers(self):
        try:
            return requests.get(self.url + '/', timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def log_tail(self, lines=40):
        return servers.log_tail(self.log_path, lines)
