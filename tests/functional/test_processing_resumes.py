"""A worker SIGKILLed at each step of processing: the node finishes every
time, with its properties, ports and rule effects applied exactly once
and one power-off (doc/guarantees.md D3b).

One worker at a time reaches Ironic through a tap that SIGKILLs it at
an exact Ironic call of processing; a new worker (as systemd would
start) takes the redelivered ``process`` request and resumes.
"""

import signal

import pytest
import requests

import backends
import batch
import cluster as cluster_mod
import ironic_tap

NODE = '/v1/nodes/[0-9a-f-]{36}'
#: (step, method, path, after Ironic answered)
STEPS = [
    ('after-the-processing-commit', 'POST', '/v1/ports', False),
    ('after-the-ports', 'POST', '/v1/ports', True),
    ('after-the-node-patch', 'PATCH', NODE, True),
    ('before-the-ack', 'PUT', NODE + '/states/power', True),
]
RULE = {'description': 'tags every node once', 'conditions': [],
        'actions': [{'action': 'extend-attribute', 'path': '/extra/tags',
                     'value': 'seen'},
                    {'action': 'add-trait', 'name': 'CUSTOM_SEEN'}]}


@pytest.fixture(scope='module')
def resuming_cluster(tmp_path_factory, ironic, obtain_backend):
    pg_url = obtain_backend(backends.postgres_url)
    rabbit_url = obtain_backend(backends.rabbit_url)
    redis_url = obtain_backend(backends.redis_url)
    with ironic_tap.IronicTap(ironic.url) as tap:
        the_cluster = cluster_mod.Cluster(
            tmp_path_factory.mktemp('resume'), pg_url, rabbit_url, redis_url,
            tap.url, apis=1, workers=1,
            conf={'processing': {'add_ports': 'all'},
                  'worker': {'pool_size': 1}}).start()
        api = the_cluster.api_urls[0]
        rule = requests.post(api + '/v1/rules', json=RULE, timeout=30)
        assert rule.status_code == 201, rule.text
        try:
            yield the_cluster, tap
        finally:
            requests.delete(api + '/v1/rules', timeout=30)
            the_cluster.stop()
            backends.drop_database(pg_url)
            backends.delete_vhost(rabbit_url)
            backends.flush_redis_namespace(redis_url)


def _kill(the_cluster, killed):
    def kill():
        victim = [w for w in the_cluster.workers if w.poll() is None][-1]
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        killed.append(victim.name)
    return kill


def _wait_for_state(api, uuid, state, timeout=120):
    return backends.wait_for(
        lambda: _status(api, uuid).get('state') == state, timeout,
        interval=0.2, message='node %s never reached %s' % (uuid, state))


def _status(api, uuid):
    return requests.get('%s/v1/introspection/%s' % (api, uuid),
                        timeout=30).json()


@pytest.mark.parametrize('step,method,path,after', STEPS,
                         ids=[s[0] for s in STEPS])
def test_a_worker_killed_mid_processing_is_resumed_and_applies_once(
        resuming_cluster, ironic, step, method, path, after):
    the_cluster, tap = resuming_cluster
    api = the_cluster.api_urls[0]
    [(uuid, payload)] = batch.create_nodes(ironic, 1).items()
    killed = []
    body = '"power off"' if step == 'before-the-ack' else None
    tap.arm(method, path, _kill(the_cluster, killed), after=after, body=body)
    try:
        assert requests.post('%s/v1/introspection/%s' % (api, uuid),
                             timeout=30).status_code == 202
        _wait_for_state(api, uuid, 'waiting')
        answer = requests.post(api + '/v1/continue', json=payload, timeout=30)
        assert answer.status_code == 200, answer.text
        backends.wait_for(lambda: killed, 60, interval=0.1,
                          message='the tap never met %s' % step)
        the_cluster.add_worker({'worker': {'pool_size': 1}})
        _wait_for_state(api, uuid, 'finished', timeout=90)
    except Exception:
        print(the_cluster.logs(60))
        raise
    _assert_applied_once(ironic, tap, uuid, payload)


def _assert_applied_once(ironic, tap, uuid, payload):
    node = ironic.get_node(uuid)
    assert (node['properties']['cpus'], node['properties']['memory_mb']) == (
        '4', '8192'), node['properties']
    assert node['extra']['tags'] == ['seen']
    assert node['traits'] == ['CUSTOM_SEEN']
    macs = [i['mac_address'] for i in payload['inventory']['interfaces']]
    assert sorted(p['address'] for p in ironic.ports(uuid)) == sorted(macs)
    assert tap.count('PUT', '/v1/nodes/%s/states/power' % uuid,
                     body='"power off"') == 1
    assert tap.count('PUT', '/v1/nodes/%s/states/power' % uuid,
                     body='"rebooting"') == 1
    ironic.delete_node(uuid)


def test_processing_plans_from_the_ports_listed_at_start_once(
        resuming_cluster, ironic):
    """The start lists the node's ports once and records them; processing
    plans its port changes from that record (no second listing), and a
    planned port update whose port was deleted since is skipped."""
    the_cluster, tap = resuming_cluster
    api = the_cluster.api_urls[0]
    [(uuid, payload)] = batch.create_nodes(ironic, 1).items()
    [port] = ironic.ports(uuid)
    ironic.request('PATCH', '/v1/ports/%s' % port['uuid'], json=[
        {'op': 'replace', 'path': '/pxe_enabled', 'value': False}])
    try:
        assert requests.post('%s/v1/introspection/%s' % (api, uuid),
                             timeout=30).status_code == 202
        _wait_for_state(api, uuid, 'waiting')
        ironic.request('DELETE', '/v1/ports/%s' % port['uuid'],
                       expect=(204,))
        answer = requests.post(api + '/v1/continue', json=payload, timeout=30)
        assert answer.status_code == 200, answer.text
        _wait_for_state(api, uuid, 'finished', timeout=90)
    except Exception:
        print(the_cluster.logs(60))
        raise
    assert _status(api, uuid)['error'] is None
    assert tap.count('GET', '/v1/ports', query='node_uuid=%s' % uuid) == 1
    assert tap.count('PATCH', '/v1/ports/%s' % port['uuid']) == 1
    ironic.delete_node(uuid)
