"""schemathesis against the served OpenAPI document of a real all-in-one
``inspector-ha`` (SQLite, in-process messaging) and a real Ironic.

Every operation of ``GET /v1/openapi.json`` gets generated requests,
valid and invalid (examples, coverage and fuzzing phases, a fixed seed,
a bounded number of examples), and none may be answered with a 5xx.
Half of the generated node identifiers and rule UUIDs are drawn from
real ones: a node waiting for its ramdisk, a finished node with stored
data, an Ironic node known by name only, and a rule; the others are
random, so unknown and malformed identifiers are tried as well.
"""

import signal
import subprocess
import uuid as uuidlib

import requests

import backends
import servers
import cluster as cluster_mod
import embedded
import ramdisk

SEED = 20240611
MAX_EXAMPLES = 25
#: A wall-clock bound on the run; it takes well under a minute when idle.
TIMEOUT = 300
RULE = {'description': 'small nodes', 'actions': [
    {'action': 'set-capability', 'name': 'small', 'value': 'yes'}],
    'conditions': [{'op': 'le', 'field': 'memory_mb', 'value': 8192}]}


def _mac(seed, index):
    value = (0x52 << 40) | (seed << 8) | index
    return ':'.join('%02x' % (value >> s & 0xff) for s in range(40, -8, -8))


def _status(url, node):
    return requests.get('%s/v1/introspection/%s' % (url, node),
                        timeout=30).json()


def _start(url, node, state):
    """Start introspection of ``node`` without boot management and wait
    until it is in ``state``."""
    resp = requests.post('%s/v1/introspection/%s?manage_boot=false' % (
        url, node), timeout=30)
    assert resp.status_code == 202, resp.text
    backends.wait_for(lambda: _status(url, node)['state'] == state, 60,
                      interval=0.2, message='%s not %s' % (node, state))


def _seed(url, ironic):
    """Real identifiers for the generated requests; the Ironic nodes."""
    seed = uuidlib.uuid4().int % 0xffffff
    macs = [_mac(seed, i) for i in range(2)]
    name = 'schemathesis-%06x' % seed
    nodes = [ironic.create_node(macs=[mac]) for mac in macs]
    nodes.append(ironic.create_node(name=name))
    waiting, finished = nodes[:2]
    _start(url, waiting, 'waiting')
    _start(url, finished, 'waiting')
    resp = requests.post(url + '/v1/continue',
                         json=ramdisk.ipa_payload([macs[1]]), timeout=30)
    assert resp.status_code == 200, resp.text
    backends.wait_for(lambda: _status(url, finished)['finished'], 60,
                      interval=0.2, message='%s not finished' % finished)
    rule = requests.post(url + '/v1/rules', json=RULE, timeout=30).json()
    return nodes, {'nodes': [waiting, finished, name],
                   'rules': [rule['uuid']]}


def _config(path, dictionaries):
    """A schemathesis.toml drawing half of the identifiers from these."""
    lines = []
    for name, values in dictionaries.items():
        lines += ['[dictionaries.%s]' % name,
                  'values = [%s]' % ', '.join('"%s"' % v for v in values)]
    lines += ['[parameters]',
              '"path.node_id" = { dictionary = "nodes", probability = 0.5 }',
              '"path.uuid" = { dictionary = "rules", probability = 0.5 }']
    path.write_text('\n'.join(lines) + '\n')
    return path


def _schemathesis(url, config, report):
    return subprocess.run(
        [str(cluster_mod.BIN / 'schemathesis'), '--config-file', str(config),
         'run', url + '/v1/openapi.json',
         '--checks', 'not_a_server_error',
         '--phases', 'examples,coverage,fuzzing',
         '--max-examples', str(MAX_EXAMPLES), '--seed', str(SEED),
         '--workers', '1', '--generation-database', 'none',
         '--request-timeout', '60', '--no-color',
         '--report', 'junit', '--report-junit-path', str(report)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=TIMEOUT)


def _forget(ironic, nodes):
    for node in nodes:
        try:
            ironic.delete_node(node)
        except RuntimeError:
            pass  # NOTE: a node still locked by a fake power action


def test_generated_requests_to_every_operation_get_no_server_error(
        tmp_path, ironic):
    proc, url = embedded.start(tmp_path, ironic.url,
                               OS_PROCESSING__STORE_DATA='database')
    nodes = []
    try:
        nodes, dictionaries = _seed(url, ironic)
        config = _config(tmp_path / 'schemathesis.toml', dictionaries)
        result = _schemathesis(url, config, tmp_path / 'junit.xml')
        assert result.returncode == 0, result.stdout[-20000:]
        log = (tmp_path / 'aio.log').read_text()
        assert 'Unexpected error in the API' not in log, \
            servers.log_tail(tmp_path / 'aio.log')
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        _forget(ironic, nodes)
