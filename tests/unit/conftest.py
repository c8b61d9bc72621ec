"""Local, real backends for the unit tests.

Every backend that can run in-process runs for real: a SQLite database file
per test, a tooz ``file://`` coordinator, oslo.messaging's ``fake:/``
transport.  Ironic is a remote peer; the unit tests need none of its
endpoints, but building the openstacksdk proxy performs version discovery
at once (see ``test_api.py``), so :func:`ironic_discovery` answers that
discovery and nothing else.  Every other call is recorded and refused with
503, so a test can assert that Ironic was not called.
"""

import collections
import http.server
import threading
import uuid as uuidlib

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from inspector_ha.common import retry
from inspector_ha import conf as conf_mod
from inspector_ha.conf import opts
from inspector_ha.db import api as db_api
from inspector_ha.db import migration
from inspector_ha.db import models
from inspector_ha.db import nodes
from inspector_ha.fsm import states as st
from inspector_ha import service as service_mod

import httpfakes

ACTOR = 'unit-test'


@pytest.fixture
def db_url(tmp_path):
    """A SQLite database file at the current schema."""
    url = 'sqlite:///%s' % (tmp_path / 'inspector.sqlite')
    migration.upgrade(url)
    return url


@pytest.fixture
def stop():
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def store(db_url, stop):
    policy = retry.RetryPolicy('database', 2, 0.05, stop, db_api.RETRYABLE)
    store = db_api.Store(db_url, policy)
    yield store
    store.dispose()


def path_to(state):
    """The shortest list of (event, target) leading from starting to state."""
    start = st.ENROLLING if state == st.ENROLLING else st.STARTING
    queue = collections.deque([(start, [])])
    seen = {start}
    while queue:
        current, path = queue.popleft()
        if current == state:
            return path
        for event, target in sorted(st.TRANSITIONS[current].items()):
            if target not in seen:
                seen.add(target)
                queue.append((target, path + [(event, target)]))
    raise AssertionError('%s is unreachable from starting' % state)


def _put_node(session, uuid, state, macs, bmcs, manage_boot):
    nodes.create(session, uuid, manage_boot, ACTOR, None)
    if state == st.ENROLLING:
        # NOTE: only discovery enters enrolling, by creating the row in it.
        session.execute(sa.update(models.Node).where(
            models.Node.uuid == uuid).values(state=state))
    for event, target in path_to(state):
        node = nodes.get(session, uuid)
        nodes.transition(session, node, event, target, ACTOR,
                         error='set up by a test'
                         if target == st.ERROR else None)
    nodes.add_attributes(session, uuid, 'mac', macs)
    nodes.add_attributes(session, uuid, 'bmc_address', bmcs)


@pytest.fixture
def put_node(store):
    """``put_node(state, macs=(), bmcs=(), manage_boot=True) -> uuid``.

    Writes a node row straight into ``state`` through legal transitions,
    then its lookup attributes.
    """
    def put(state, macs=(), bmcs=(), manage_boot=True, uuid=None):
        uuid = uuid or str(uuidlib.uuid4())
        store.transaction(_put_node, uuid, state, list(macs), list(bmcs),
                          manage_boot)
        return uuid
    return put


class _DiscoveryOnly(httpfakes.JsonHandler):
    def do_GET(self):
        self.server.calls.append(('GET', self.path))
        root = 'http://%s:%d' % self.server.server_address[:2]
        version = {'id': 'v1', 'status': 'CURRENT', 'min_version': '1.1',
                   'version': '1.99',
                   'links': [{'href': root + '/v1/', 'rel': 'self'}]}
        if self.path.rstrip('/') == '':
            self.reply(200, {'name': 'OpenStack Ironic API',
                             'default_version': version,
                             'versions': [version]})
        elif self.path.rstrip('/') == '/v1':
            self.reply(200, {'id': 'v1', 'version': version,
                             'links': version['links']})
        else:
            self._refuse()

    def do_POST(self):
        self._refuse()

    do_PUT = do_PATCH = do_DELETE = do_POST

    def _refuse(self):
        self.server.calls.append((self.command, self.path))
        self.reply(503, {'error_message': 'no Ironic in the unit tests'})


class IronicDiscovery:
    DISCOVERY = ('/', '/v1', '/v1/')

    def __init__(self):
        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       _DiscoveryOnly)
        self._server.calls = []
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)
        self._thread.start()
        self.url = 'http://127.0.0.1:%d' % self._server.server_address[1]

    def forget(self):
        self._server.calls.clear()

    def discovery_calls(self):
        return [c for c in self._server.calls if c[1] in self.DISCOVERY]

    def calls_beyond_discovery(self):
        return [c for c in self._server.calls if c[1] not in self.DISCOVERY]

    def close(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope='session')
def ironic_discovery():
    stub = IronicDiscovery()
    yield stub
    stub.close()


@pytest.fixture
def service_conf(tmp_path, db_url, ironic_discovery):
    """The global ``cfg.CONF`` (oslo.messaging wants it), reset afterwards."""
    ironic_discovery.forget()
    conf = cfg.CONF
    conf_mod.register_opts(conf)
    for group, options in opts.list_opts():
        conf.register_opts(options, group=group)
    conf([], project='inspector-ha', default_config_files=[])
    overrides = [
        ('state_path', str(tmp_path), None),
        ('host', 'unit-host', None),
        ('auth_strategy', 'noauth', None),
        ('transport_url', 'fake:/', None),
        ('connection', db_url, 'database'),
        ('retry_timeout', 0.05, 'database'),
        ('backend_url', 'file://%s' % (tmp_path / 'coordination'),
         'coordination'),
        ('auth_type', 'none', 'ironic'),
        ('endpoint_override', ironic_discovery.url, 'ironic'),
        ('retry_count', 0, 'ironic'),
        ('requeue_delay', 0.0, 'worker'),
    ]
    for name, value, group in overrides:
        conf.set_override(name, value, group=group)
    yield conf
    conf.reset()


@pytest.fixture
def service(service_conf):
    """A real Service with its coordinator started and no consumer."""
    svc = service_mod.Service(service_conf)
    svc.start(workers=False, periodic_jobs=False)
    yield svc
    svc.shutdown()
