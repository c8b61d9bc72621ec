"""The container image, tested as it is run: built by
``tools/build-image.sh``, run by podman with each container's command,
user and mounts from the rendered kustomize base (deploy/kubernetes),
the shipped ConfigMap as its configuration, against the test backends
and a real Ironic, behind the shipped HAProxy. The site's Secret is the
test's: its backends' URLs, and, on this loopback without Keystone
(test_keystone.py covers that), ``auth_strategy = noauth`` and Ironic
without authentication. The image build takes about 90 s."""

import os
import pathlib
import threading
import time

import pytest

import backends
import batch
import container
import haproxy
import kustomize
import ramdisk
import split

BASE = pathlib.Path(__file__).resolve().parents[2] / 'deploy' / 'kubernetes'\
    / 'base'
NODES = 10
SECRETS = """\
[DEFAULT]
transport_url = {transport}
auth_strategy = noauth
listen_address = 127.0.0.1
[database]
connection = {database}
[coordination]
backend_url = {coordination}
[worker]
health_address = 127.0.0.1
[ironic]
auth_type = none
endpoint_override = {ironic}
"""


@pytest.fixture(scope='module')
def image():
    """The image built from this checkout (or, to iterate on these tests,
    the one ``INSPECTOR_HA_IMAGE`` names)."""
    return os.environ.get('INSPECTOR_HA_IMAGE') or container.build()


@pytest.fixture(scope='module')
def manifests():
    """``{(kind, name): document}`` of the rendered base."""
    return {(d['kind'], d['metadata']['name']): d
            for d in kustomize.render(BASE)}


def _containers(manifests):
    """``(pod spec, container spec)`` of the dbsync Job, the API and the
    worker Deployments."""
    found = []
    for key in (('Job', 'inspector-ha-dbsync'),
                ('Deployment', 'inspector-ha-api'),
                ('Deployment', 'inspector-ha-worker')):
        pod = container.pod_spec(manifests[key])
        spec, = pod['containers']
        found.append((pod, spec))
    return found


def test_the_manifests_name_the_built_image_its_user_paths_and_commands(
        image, manifests):
    config = container.image_config(image)
    assert config['Entrypoint'] == ['/usr/bin/tini', '--']
    listing = container.in_image(
        image, 'sh', '-c', 'for c in inspector-ha-dbsync inspector-ha-api '
        'inspector-ha-worker; do command -v $c; done; '
        'stat -c "%n %u" /etc/inspector-ha /var/lib/inspector-ha')
    for pod, spec in _containers(manifests):
        assert spec['image'] == image, spec['name']
        assert str(pod['securityContext']['runAsUser']) == config['User']
        assert ('/' + spec['args'][0]) in listing, listing
        assert 'command' not in spec, 'the entry point (tini) runs it'
        for mount in spec['volumeMounts']:
            parent = mount['mountPath'].rsplit('/', 1)[0] \
                if 'subPath' in mount else mount['mountPath']
            assert parent in listing or parent.startswith(
                '/etc/inspector-ha/'), mount
    state = '/var/lib/inspector-ha %s' % config['User']
    assert state in listing, listing


class Site:
    """The base's containers of ``image`` on this host: the ConfigMap's
    file, the test's Secret, an emptyDir per process."""

    def __init__(self, tmp_path, image, manifests, urls):
        self.image, self._tmp = image, tmp_path
        (self.dbsync, self.api, self.worker) = _containers(manifests)
        config = manifests[('ConfigMap', 'inspector-ha-config')]['data']
        self.volumes = {'config': self._files('config', config),
                        'secrets': self._files('secrets', {
                            'secrets.conf': SECRETS.format(**urls)})}
        self.grace = {
            name: container.pod_spec(manifests[('Deployment', name)])[
                'terminationGracePeriodSeconds']
            for name in ('inspector-ha-api', 'inspector-ha-worker')}
        self.running = []

    def _files(self, name, data):
        directory = self._tmp / name
        directory.mkdir()
        for key, text in data.items():
            (directory / key).write_text(text)
            (directory / key).chmod(0o644)
        return directory

    def _state(self):
        """An emptyDir: a fresh directory the container's user owns."""
        directory = self._tmp / backends.unique_name('state')
        directory.mkdir()
        os.chown(directory, 42424, 42424)
        return directory

    def run(self, pod_and_spec, **env):
        pod, spec = pod_and_spec
        volumes = dict(self.volumes, state=self._state())
        one = container.Container(self.image, pod, spec, volumes, env)
        self.running.append(one)
        return one

    def close(self):
        for one in self.running:
            one.remove()


def _port(spec, name):
    return next(p['containerPort'] for p in spec['ports']
                if p['name'] == name)


def _probe_paths(spec):
    return {spec[probe]['httpGet']['path']
            for probe in ('readinessProbe', 'livenessProbe')}


def _wait_ready(port, spec):
    """Until the process on ``port`` answers its probes' paths."""
    for path in _probe_paths(spec):
        url = 'http://127.0.0.1:%d%s' % (port, path)
        backends.wait_for(lambda: backends.answers(url), 60, interval=0.5,
                          message='%s never answered' % url)


@pytest.fixture
def site(tmp_path, image, manifests, ironic, obtain_backend):
    private = split.PrivateBackends(obtain_backend)
    the_site = Site(tmp_path, image, manifests, dict(
        vars(private), ironic=ironic.url))
    try:
        yield the_site
    finally:
        the_site.close()
        private.remove()


def test_the_image_serves_a_batch_and_each_container_stops_cleanly(
        site, ironic):
    code, output = site.run(site.dbsync).run()
    assert code == 0, output
    api_spec, worker_spec = site.api[1], site.worker[1]
    # NOTE: the ConfigMap's ports are the manifests' container ports; on
    # one host network each process gets its own instead.
    assert _port(api_spec, 'http') == 5050
    assert _port(worker_spec, 'health') == 8080
    apis = {backends.free_port(): None for _ in range(2)}
    for port in apis:
        apis[port] = site.run(site.api,
                              OS_DEFAULT__LISTEN_PORT=port).start()
    workers = {backends.free_port(): None for _ in range(2)}
    for port in workers:
        workers[port] = site.run(site.worker,
                                 OS_WORKER__HEALTH_PORT=port).start()
    for port, spec in [(p, api_spec) for p in apis] + [
            (p, worker_spec) for p in workers]:
        _wait_ready(port, spec)
    proxy = haproxy.HAProxy(['http://127.0.0.1:%d' % p for p in apis])
    proxy.start()
    try:
        _batch_with_a_worker_replaced(site, ironic, proxy, workers)
    finally:
        proxy.stop()
    codes = {}
    stops = [threading.Thread(target=lambda one=one, grace=grace: codes.
                              update({one: one.stop(grace)}))
             for group, grace in ((apis, site.grace['inspector-ha-api']),
                                  (workers,
                                   site.grace['inspector-ha-worker']))
             for one in group.values()]
    for stop in stops:
        stop.start()
    for stop in stops:
        stop.join()
    assert set(codes.values()) == {0}, '\n'.join(
        '%s exited %s:\n%s' % (one.command, code, one.logs()[-3000:])
        for one, code in codes.items() if code)


def test_a_container_stopped_while_it_starts_ends_at_once(site):
    # NOTE: before its handlers are set, the process dies of SIGTERM's
    # default action (143 through tini); without tini, as PID 1, it would
    # ignore it until the grace period's SIGKILL.
    worker = site.run(site.worker, OS_WORKER__HEALTH_PORT=0).start()
    began = time.monotonic()
    assert worker.stop(30) in (0, 143)
    assert time.monotonic() - began < 10


def _batch_with_a_worker_replaced(site, ironic, proxy, workers):
    """A batch through HAProxy; mid-batch one worker container is
    SIGTERMed (it exits 0) and a new one takes its place."""
    nodes = batch.create_nodes(ironic, NODES)
    disks = ramdisk.Ramdisks(ironic.url, [proxy.url], nodes).start()
    try:
        batch.start_all([proxy.url], list(nodes))
        backends.wait_for(lambda: any(
            ironic.power_state(u) == 'power on' for u in nodes), 60,
            interval=0.2, message='no node was powered on')
        port, victim = next(iter(workers.items()))
        assert victim.stop(site.grace['inspector-ha-worker']) == 0, \
            victim.logs()
        workers[port] = site.run(site.worker,
                                 OS_WORKER__HEALTH_PORT=port).start()
        _wait_ready(port, site.worker[1])
        states = batch.wait_finished(proxy.url, list(nodes), 180)
    finally:
        disks.stop()
    assert {s['state'] for s in states.values()} == {'finished'}, states
    assert not disks.gave_up
    assert proxy.retries() == 0
    for uuid in nodes:
        ironic.delete_node(uuid)
