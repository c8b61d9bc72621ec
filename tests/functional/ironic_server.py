"""A real Ironic 39 for the functional tests and the benchmarks
(fake-hardware, noauth, SQLite by default), as a private server process.
"""

import os
import pathlib
import shutil
import subprocess
import threading
from concurrent import futures

import requests

from backends import (BackendUnavailable, INSTALL_HINT, REPO_ROOT,
                      unique_name, wait_for)
from servers import Server


IRONIC_CONF = """\
[DEFAULT]
host = {host}
auth_strategy = noauth
rpc_transport = {rpc_transport}
use_stderr = true
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_firmware_interfaces = fake,no-firmware
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor
default_network_interface = noop
default_inspect_interface = fake
default_deploy_interface = fake
default_boot_interface = fake
[api]
host_ip = 127.0.0.1
port = {port}
api_workers = {api_workers}
restrict_lookup = {restrict_lookup}
[conductor]
automated_clean = false
[dhcp]
dhcp_provider = none
[database]
connection = {database}
sqlite_synchronous = false
[oslo_concurrency]
lock_path = {tmpdir}/locks
"""


class Ironic(Server):
    """A real all-in-one Ironic 39 (fake-hardware, noauth, SQLite).

    Runs from the venv at ``INSPECTOR_HA_IRONIC_VENV`` (default
    ``<repo>/.venv-ironic``).
    """

    name = 'ironic'
    HEADERS = {'X-OpenStack-Ironic-API-Version': 'latest'}

    def __init__(self, port=None, restrict_lookup=True, venv=None,
                 extra_conf='', seed_database=None):
        """``seed_database``: an Ironic SQLite database to start from (a
        copy of it is used)."""
        super().__init__(port)
        self.extra_conf = extra_conf
        self.venv = pathlib.Path(venv or os.environ.get(
            'INSPECTOR_HA_IRONIC_VENV', REPO_ROOT / '.venv-ironic'))
        self.restrict_lookup = restrict_lookup
        self.conf_path = self.tmpdir / 'ironic.conf'
        self._schema_made = False
        if seed_database:
            shutil.copyfile(seed_database, self.database_file)
            self._schema_made = True
        self._local = threading.local()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.port}'

    start_timeout = 60

    def _launch(self, timeout):
        if not (self.venv / 'bin' / 'ironic').exists():
            raise BackendUnavailable(
                f'Ironic: no {self.venv}/bin/ironic; '
                f'set INSPECTOR_HA_IRONIC_VENV {INSTALL_HINT}')
        self._configure()
        self._spawn([str(self.venv / 'bin' / 'ironic'),
                     '--config-file', str(self.conf_path)], cwd=self.tmpdir)
        self._wait_ready(self._answers, timeout)

    def _configure(self):
        """Write its configuration file; create its schema once."""
        self.conf_path.write_text(IRONIC_CONF.format(
            **self._conf_fields()) + self.extra_conf)
        if not self._schema_made:
            self._dbsync()
            self._schema_made = True

    def _conf_fields(self):
        """The values :data:`IRONIC_CONF` is filled with."""
        return {'host': unique_name('ironic'), 'port': self.port,
                'tmpdir': self.tmpdir, 'rpc_transport': 'none',
                'api_workers': 1,
                'database': self.database_url,
                'restrict_lookup': str(self.restrict_lookup).lower()}

    @property
    def database_url(self):
        """Its database's SQLAlchemy URL."""
        return f'sqlite:///{self.database_file}'

    @property
    def database_file(self):
        """Its SQLite database (while it runs on SQLite)."""
        return self.tmpdir / 'ironic.sqlite'

    @property
    def procs(self):
        """Its processes started here (each a master of others)."""
        return [self.proc]

    def _dbsync(self):
        proc = subprocess.run(
            [str(self.venv / 'bin' / 'ironic-dbsync'), '--config-file',
             str(self.conf_path), 'create_schema'], cwd=self.tmpdir,
            capture_output=True, text=True, timeout=120, check=False)
        if proc.returncode:
            raise BackendUnavailable(f'Ironic: ironic-dbsync failed:\n'
                                     f'{proc.stderr[-3000:]}')

    def _answers(self):
        try:
            return requests.get(self.url + '/', timeout=2).status_code == 200
        except requests.RequestException:
            return False

    # --- HTTP -------------------------------------------------------------

    def request(self, method, path, expect=(200,), **kwargs):
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self.HEADERS)
        resp = session.request(method, self.url + path, timeout=30, **kwargs)
        if resp.status_code not in expect:
            raise RuntimeError(f'Ironic {method} {path}: {resp.status_code} '
                               f'{resp.text[:500]}')
        return resp.json() if resp.content else None

    def create_node(self, name=None, macs=(), bmc_address=None,
                    provision_state='manageable'):
        """Create a fake-hardware node with one PXE port per MAC, move it to
        ``provision_state`` (enroll, manageable or available); return its
        UUID."""
        body = {'driver': 'fake-hardware'}
        if name:
            body['name'] = name
        if bmc_address:
            body['driver_info'] = {'ipmi_address': bmc_address}
        node = self.request('POST', '/v1/nodes', expect=(201,), json=body)
        for mac in macs:
            self.request('POST', '/v1/ports', expect=(201,), json={
                'node_uuid': node['uuid'], 'address': mac,
                'pxe_enabled': True})
        steps = {'enroll': [], 'manageable': [('manage', 'manageable')],
                 'available': [('manage', 'manageable'),
                               ('provide', 'available')]}[provision_state]
        for verb, target in steps:
            self.set_provision_state(node['uuid'], verb, target)
        return node['uuid']

    def create_nodes(self, specs, workers=2):
        """Create many nodes in parallel; ``specs`` are create_node kwargs.
        Returns the UUIDs in the order of ``specs``."""
        with futures.ThreadPoolExecutor(workers) as pool_:
            return list(pool_.map(lambda kw: self.create_node(**kw), specs))

    def set_provision_state(self, uuid_, verb, wait_for_state=None,
                            timeout=30):
        self.request('PUT', f'/v1/nodes/{uuid_}/states/provision',
                     expect=(202,), json={'target': verb})
        if wait_for_state:
            path = f'/v1/nodes/{uuid_}?fields=provision_state'
            wait_for(lambda: self.request('GET', path)['provision_state']
                     == wait_for_state, timeout, interval=0.02,
                     message=f'node {uuid_} not {wait_for_state} after '
                     f'{timeout} s')

    def get_node(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}')

    def ports(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}/ports/detail')['ports']

    def power_state(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}/states')['power_state']

    def delete_node(self, uuid_):
        self.request('DELETE', f'/v1/nodes/{uuid_}', expect=(204,))


#: Where an operator reads Ironic's ``[inspector]`` settings.
MIGRATION_DOC = REPO_ROOT / 'doc' / 'migrating-from-ironic-inspector.md'
#: The service's address in the documented settings.
DOCUMENTED_URL = 'http://inspector-ha:5050'
#: Where Ironic tells a ramdisk it boots to post (the ramdisks here post
#: to the service's URL).
CALLBACK_URL = 'http://inspector-ha.test:5050'


def documented_inspector_conf(inspector_url):
    """Ironic's settings for inspector-ha on a trusted network, as the
    migration doc gives them (its indented block naming
    ``enabled_inspect_interfaces``), pointed at ``inspector_url`` and
    polling each status every second instead of 60."""
    blocks, block = [], []
    for line in MIGRATION_DOC.read_text().splitlines() + ['']:
        if line.startswith('    '):
            block.append(line[4:])
        elif block and line.strip():
            blocks.append(block)
            block = []
    documented, = [b for b in blocks
                   if any('enabled_inspect_interfaces' in x for x in b)]
    text = '\n'.join(documented)
    assert DOCUMENTED_URL in text and text.rstrip().endswith(
        'require_managed_boot = false'), text
    return '\n' + text.replace(DOCUMENTED_URL, inspector_url) + (
        '\nstatus_check_period = 1\n')


#: What Ironic needs to boot a ramdisk itself (its ``pxe`` boot interface;
#: ``fake`` refuses managed inspection): the TFTP tree in its own
#: directory, the ramdisk's ``file://`` URLs allowed, and a callback URL
#: that is not loopback (Ironic refuses one; it only writes it on the
#: ramdisk's kernel command line).
MANAGED_BOOT_CONF = """
[DEFAULT]
enabled_boot_interfaces = fake,pxe
[conductor]
file_url_allowed_paths = {tmpdir}
[pxe]
tftp_root = {tmpdir}/tftp
tftp_master_path = {tmpdir}/tftp/master_images
images_path = {tmpdir}/images
instance_master_path = {tmpdir}/master_images
[inspector]
callback_endpoint_override = %s
""" % CALLBACK_URL

#: The last Ironic that has the ``inspector`` interface (33 removed it).
DRIVING_IRONIC_VERSION = '32.1.0'


class DrivingIronic(Ironic):
    """Ironic 32.1.0 (the venv at ``INSPECTOR_HA_IRONIC32_VENV``, by
    default ``<repo>/.venv-ironic-32``) whose ``inspector`` inspect
    interface drives the service at ``inspector_url``; it is the
    service's node store too."""

    name = 'ironic-32'

    def __init__(self, inspector_url, port=None):
        super().__init__(
            port=port, venv=os.environ.get(
                'INSPECTOR_HA_IRONIC32_VENV', REPO_ROOT / '.venv-ironic-32'),
            extra_conf=documented_inspector_conf(inspector_url))
        self.extra_conf += MANAGED_BOOT_CONF.format(tmpdir=self.tmpdir)
        self._ramdisk = {}
        for name in ('kernel', 'initramfs'):
            path = self._ramdisk[name] = self.tmpdir / ('ipa.' + name)
            path.write_bytes(name.encode() * 64)

    def manage_boot(self, uuid_):
        """Let Ironic boot the node's ramdisk itself (the ``pxe`` boot
        interface, with a kernel and an initramfs of its own)."""
        self.request('PATCH', f'/v1/nodes/{uuid_}', json=[
            {'op': 'add', 'path': '/boot_interface', 'value': 'pxe'},
            {'op': 'add', 'path': '/driver_info/deploy_kernel',
             'value': self._ramdisk['kernel'].as_uri()},
            {'op': 'add', 'path': '/driver_info/deploy_ramdisk',
             'value': self._ramdisk['initramfs'].as_uri()}])

    def calls(self, method, path):
        """How many ``method path`` requests its API has logged."""
        return self.log_path.read_text().count(f' - {method} {path} - ')

    def inspect(self, uuid_):
        """``openstack baremetal node inspect``: Ironic starts it."""
        self.set_provision_state(uuid_, 'inspect')

    def abort(self, uuid_):
        self.set_provision_state(uuid_, 'abort')

    def inventory(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}/inventory')


#: ironic-inspector's default processing hooks under Ironic 39's names.
BUILTIN_HOOKS = ('ramdisk-error,validate-interfaces,ports,architecture,'
                 'root-device,cpus,memory,boot-mode,cpu-capabilities,'
                 'pci-devices')
# (Ironic's default_hooks are the first four; its migration doc maps
# root_disk_selection to root-device, scheduler to architecture and memory
# (cpus and root-device's local_gb complete it), capabilities to
# boot-mode and cpu-capabilities, pci_devices to pci-devices.)

#: Ironic's own in-band inspection (the ``agent`` inspect interface, which
#: sites use since Ironic 33 removed ``inspector``) on fake hardware: the
#: ``fake`` boot interface refuses managed inspection, so Ironic only
#: powers the node on and waits for the ramdisk's
#: ``/v1/continue_inspection``; the ramdisk logs of a failed inspection
#: go to its own directory.
INSPECTING_CONF = """
[DEFAULT]
enabled_inspect_interfaces = agent,fake,no-inspect
default_inspect_interface = agent
[inspector]
require_managed_boot = false
hooks = {hooks}
[agent]
deploy_logs_local_path = {tmpdir}/deploy-logs
"""

#: Provision states of an inspection under way.
INSPECTING_STATES = ('inspecting', 'inspect wait')


class InspectingIronic(Ironic):
    """Ironic 39 inspecting nodes itself (the ``agent`` inspect interface,
    :data:`BUILTIN_HOOKS`, its inspection rules, API 1.96): what replaces
    ironic-inspector at sites that dropped it."""

    name = 'ironic-inspecting'

    def __init__(self, port=None, hooks=BUILTIN_HOOKS, extra_conf=''):
        super().__init__(port=port)
        self.extra_conf = INSPECTING_CONF.format(
            hooks=hooks, tmpdir=self.tmpdir) + extra_conf

    def _wait_node(self, uuid_, done, timeout, what):
        """Poll the node until ``done(provision_state)``; return it."""
        def reached():
            node = self.get_node(uuid_)
            return node if done(node['provision_state']) else None
        return wait_for(reached, timeout, interval=0.05,
                        message=f'node {uuid_} not {what} after {timeout} s')

    def inspect(self, uuid_, payload, timeout=60):
        """Inspect the node with the ``agent`` interface (moving it to
        ``manageable`` first): ``payload`` (IPA's post: ``inventory`` and
        plugin data) is what its ramdisk posts to
        ``/v1/continue_inspection``. Returns the node at the end; raises
        RuntimeError with its ``last_error`` if it ended ``inspect
        failed``."""
        node = self.get_node(uuid_)
        if node['inspect_interface'] != 'agent':
            self.request('PATCH', f'/v1/nodes/{uuid_}', json=[
                {'op': 'replace', 'path': '/inspect_interface',
                 'value': 'agent'}])
        if node['provision_state'] != 'manageable':
            self.set_provision_state(uuid_, 'manage', 'manageable', timeout)
        self.set_provision_state(uuid_, 'inspect')
        node = self._wait_node(
            uuid_, lambda s: s in ('inspect wait', 'inspect failed'),
            timeout, 'waiting for its ramdisk')
        if node['provision_state'] == 'inspect wait':
            self.request('POST', '/v1/continue_inspection',
                         expect=(200, 202), json=payload)
            node = self._wait_node(
                uuid_, lambda s: s not in INSPECTING_STATES, timeout,
                'inspected')
        if node['provision_state'] == 'inspect failed':
            # The conductor writes the error of its asynchronous processing
            # just after the state.
            node = self._failed(uuid_)
            raise RuntimeError(f'Ironic failed to inspect node {uuid_}: '
                               f'{node["last_error"]}')
        return node

    def _failed(self, uuid_, timeout=5):
        """The failed node once its ``last_error`` is written (or as it is
        after ``timeout`` seconds)."""
        def with_error():
            node = self.get_node(uuid_)
            return node if node['last_error'] else None
        try:
            return wait_for(with_error, timeout, interval=0.05)
        except TimeoutError:
            return self.get_node(uuid_)

    def traits(self, uuid_):
        return self.request('GET', f'/v1/nodes/{uuid_}/traits')['traits']

    # --- inspection rules (API 1.96) ----------------------------------------

    def create_rule(self, rule):
        """POST an inspection rule; return it as Ironic shows it.

        Ironic 39 stores a rule without ``conditions`` yet answers 500;
        it refuses bad action or condition args with a 500 too; it takes
        any string as a client-given ``uuid``, though only a UUID can be
        shown or deleted afterwards."""
        return self.request('POST', '/v1/inspection_rules', expect=(201,),
                            json=rule)

    def rules(self):
        """Every inspection rule, in detail. (Pages by marker: the ``next``
        links of Ironic 39's list point at ``/v1/inspection``.)"""
        found, marker = [], ''
        while True:
            page = self.request(
                'GET', '/v1/inspection_rules?detail=true' + marker)
            found += page['inspection_rules']
            if not page.get('next'):
                return found
            marker = '&marker=' + found[-1]['uuid']

    def delete_rules(self):
        for rule in self.rules():
            self.request('DELETE', f'/v1/inspection_rules/{rule["uuid"]}',
                         expect=(204,))
