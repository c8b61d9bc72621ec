"""Bodies a server cannot use are a 400 on every endpoint, never a 500.

Hostile JSON (deep nesting, huge numbers, invalid UTF-8, duplicate keys,
NaN, NUL) is posted to every endpoint that reads a body; the ramdisk
payload gets a wrong type at every field the service reads, by hand and
by hypothesis.
"""

import copy
import subprocess
import sys
import textwrap

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as hst
import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.api import body
from inspector_ha.api import ramdisk
from inspector_ha.fsm import states as st

MAC = '52:54:00:aa:bb:cc'
UNKNOWN = '00000000-0000-4000-8000-000000000000'
DISK = {'name': '/dev/sda', 'model': 'QEMU', 'size': 10 * 1024 ** 3,
        'rotational': False, 'serial': None, 'wwn': None, 'vendor': 'QEMU',
        'hctl': '0:0:0:0', 'by_path': None}
PAYLOAD = {
    'inventory': {
        'interfaces': [{'name': 'eth0', 'mac_address': MAC,
                        'ipv4_address': '192.0.2.10', 'ipv6_address': None,
                        'has_carrier': True, 'lldp': [], 'vendor': None,
                        'product': None, 'client_id': None,
                        'biosdevname': None, 'speed_mbps': 1000,
                        'pci_address': None}],
        'cpu': {'model_name': 'QEMU', 'frequency': '2000', 'count': 2,
                'architecture': 'x86_64', 'flags': ['vmx'],
                'socket_count': 1},
        'memory': {'total': 2 ** 31, 'physical_mb': 2048},
        'disks': [DISK], 'bmc_address': '', 'bmc_v6address': '::/0',
        'bmc_mac': None, 'hostname': 'localhost',
        'system_vendor': {'product_name': 'QEMU', 'serial_number': None,
                          'manufacturer': 'QEMU', 'firmware': {}},
        'boot': {'current_boot_mode': 'bios', 'pxe_interface': MAC}},
    'root_disk': dict(DISK), 'boot_interface': '01-' + MAC.replace(':', '-'),
    'ipmi_address': None, 'ipmi_v6address': None, 'error': None,
    'logs': 'bG9ncw==', 'pci_devices': [{'vendor_id': '8086',
                                         'product_id': '1234'}],
    'data': [], 'extra': {}, 'configuration': {}, 'local_gb': 9,
    'cpus': 2, 'memory_mb': 2048, 'cpu_arch': 'x86_64'}

HOSTILE = {
    'deep nesting': b'[' * 100000 + b']' * 100000,
    'deep objects': b'{"a":' * 50000 + b'1' + b'}' * 50000,
    'nesting just past the limit': b'[' * 65 + b']' * 65,
    'a huge integer': b'{"a": 1' + b'0' * 5000 + b'}',
    'an integer past 2**63': b'{"a": 99999999999999999999}',
    'a huge float': b'{"a": 1e400}',
    'NaN': b'{"a": NaN}',
    'Infinity': b'{"a": -Infinity}',
    'invalid UTF-8': b'{"a": "\xff\xfe"}',
    'a lone surrogate': b'{"a": "\\ud800"}',
    'a NUL character': b'{"a": "x\\u0000y"}',
    'duplicate keys': b'{"inventory": {}, "inventory": {}}',
    'duplicate nested keys': b'{"a": {"b": 1, "b": 2}}',
    'truncated': b'{"inventory": {',
    'not JSON': b'\x00\x01\x02',
}


def _endpoints(put_node):
    uuid = put_node(st.FINISHED)
    return ['/v1/continue', '/v1/rules',
            '/v1/introspection/%s/data/unprocessed' % uuid]


@pytest.fixture
def client(service):
    return app_mod.create_app(service).test_client()


def _post(client, path, data):
    return client.post(path, data=data,
                       headers={'Content-Type': 'application/json'})


def _assert_400(resp):
    assert resp.status_code == 400, (resp.status_code, resp.data[:300])
    assert resp.get_json()['error']['message']


def test_a_hostile_body_is_a_400_on_every_endpoint(client, put_node):
    answers = {(name, path): _post(client, path, HOSTILE[name])
               for name in HOSTILE for path in _endpoints(put_node)}
    wrong = {key: (resp.status_code, resp.data[:200])
             for key, resp in answers.items() if resp.status_code != 400}
    assert not wrong


def test_the_400_says_what_is_wrong_with_the_body(client):
    message = _post(client, '/v1/continue', HOSTILE['deep nesting']
                    ).get_json()['error']['message']
    assert message == 'Invalid JSON body: nested deeper than 64 levels'
    message = _post(client, '/v1/continue', HOSTILE['duplicate keys']
                    ).get_json()['error']['message']
    assert message == 'Invalid JSON body: duplicate key "inventory"'


def test_a_deep_body_is_refused_before_decoding_in_a_small_stack():
    # NOTE: json's C decoder recurses once per level up to its own limit;
    # in a thread with a small stack (128 KiB: musl's default) that
    # crashed the process (a subprocess here, so a crash fails the test).
    script = textwrap.dedent("""
        import threading
        from inspector_ha.api import body
        threading.stack_size(128 * 1024)
        said = []
        def decode():
            for raw in (b'[' * 100000 + b']' * 100000,
                        b'{"a":' * 50000 + b'1' + b'}' * 50000):
                try:
                    body.decode(raw)
                except body.Invalid as exc:
                    said.append(str(exc))
        thread = threading.Thread(target=decode)
        thread.start()
        thread.join()
        print(said)
        """)
    proc = subprocess.run([sys.executable, '-c', script], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr(['nested deeper than 64 levels'] * 2)


def test_nesting_up_to_the_limit_is_decoded(client):
    body = b'{"a": ' + b'[' * 63 + b']' * 63 + b'}'
    resp = _post(client, '/v1/continue', body)
    assert 'Invalid JSON' not in resp.get_json()['error']['message']


def _paths(spec, value, path=()):
    """Every (path, types) of a known field present in ``value``."""
    if isinstance(spec, tuple) and spec and isinstance(spec[0],
                                                       (dict, list)):
        spec = spec[0]
    if isinstance(spec, dict):
        yield path, ramdisk.DICT
        for key, sub in spec.items():
            if isinstance(value, dict) and key in value:
                yield from _paths(sub, value[key], path + (key,))
    elif isinstance(spec, list):
        yield path, ramdisk.LIST
        if value:
            yield from _paths(spec[0], value[0], path + (0,))
    else:
        yield path, spec


KNOWN = [(p, t) for p, t in _paths(ramdisk.PAYLOAD, PAYLOAD) if p]


def _set(data, path, value):
    data = copy.deepcopy(data)
    target = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return data


def _wrong_value(types):
    for candidate in ('text', 7, 1.5, True, [1], {'x': 1}):
        if isinstance(candidate, bool):
            if bool not in types:
                return candidate
        elif not isinstance(candidate, types):
            return candidate
    raise AssertionError(types)


def test_every_known_field_is_covered_by_the_payload_of_these_tests():
    assert len(KNOWN) > 60


def _dotted(path):
    return '.'.join(map(str, path)).replace('.0', '[0]')


def test_a_wrong_type_at_any_known_field_of_the_payload_is_a_400(client):
    wrong = {}
    for path, types in KNOWN:
        data = _set(PAYLOAD, path, _wrong_value(types))
        resp = client.post('/v1/continue', json=data)
        message = (resp.get_json() or {}).get('error', {}).get('message')
        if resp.status_code != 400 or not message.startswith(
                'Invalid ramdisk data: %s must be ' % _dotted(path)):
            wrong[_dotted(path)] = (resp.status_code, message)
    assert not wrong


JSON_VALUES = hst.recursive(
    hst.none() | hst.booleans() | hst.integers(-2 ** 70, 2 ** 70) |
    hst.floats(allow_nan=False, allow_infinity=False) | hst.text(max_size=8),
    lambda inner: hst.lists(inner, max_size=3) |
    hst.dictionaries(hst.text(max_size=6), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=hst.integers(0, len(KNOWN) - 1), value=JSON_VALUES)
def test_any_value_at_any_known_field_is_never_a_server_error(
        client, index, value):
    path, types = KNOWN[index]
    resp = client.post('/v1/continue', json=_set(PAYLOAD, path, value))
    assert resp.status_code < 500, resp.data[:500]
    wrong = value is not None and (
        not isinstance(value, types) or
        (isinstance(value, bool) and bool not in types))
    if wrong:
        assert resp.status_code == 400, resp.data[:500]


@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extra=hst.dictionaries(hst.text(max_size=10), JSON_VALUES,
                              max_size=4),
       where=hst.sampled_from([(), ('inventory',),
                               ('inventory', 'interfaces', 0),
                               ('inventory', 'disks', 0)]))
def test_unknown_fields_anywhere_are_never_a_server_error(client, extra,
                                                          where):
    data = copy.deepcopy(PAYLOAD)
    target = data
    for step in where:
        target = target[step]
    for key, value in extra.items():
        target.setdefault(key, value)
    resp = client.post('/v1/continue', json=data)
    assert resp.status_code < 500, resp.data[:500]


def test_of_several_wrong_fields_the_first_the_spec_knows_is_named():
    with pytest.raises(body.Invalid, match='^inventory must be an object'):
        ramdisk.check({'inventory': [], 'boot_interface': 5})
    with pytest.raises(body.Invalid, match=r'^inventory\.interfaces\[1\]\.'
                                         r'name must be a string'):
        ramdisk.check({'inventory': {'interfaces': [
            {'name': 'eth0'}, {'mac_address': 5, 'name': 6}]}})
