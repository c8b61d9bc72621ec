"""Introspection rules end to end: created through the API of the
all-in-one process, applied while processing, seen in a real Ironic."""

import signal
import threading

import pytest
import requests

from inspector_ha.common import retry
from inspector_ha.db import api as db_api
from inspector_ha.db import migration
from inspector_ha.db import rules as rules_db
from inspector_ha.rules import engine
from inspector_ha.rules import plugins as plugins_mod
import batch
import embedded
import sample_rules



def _create_rule(url, rule):
    resp = requests.post(url + '/v1/rules', json=rule, timeout=30)
    assert resp.status_code == 201, resp.text
    return resp.json()


def _introspect(ironic, url, nodes):
    return batch.introspect(ironic, [url], nodes, 120)


def _shrink(payload, cpus=None, memory_mb=None):
    inventory = payload['inventory']
    inventory['cpu']['count'] = cpus or inventory['cpu']['count']
    inventory['memory']['physical_mb'] = memory_mb or \
        inventory['memory']['physical_mb']


def test_rules_change_matching_nodes_in_ironic_or_fail_them(tmp_path,
                                                            ironic):
    proc, url = embedded.start(tmp_path, ironic.url)
    try:
        big, small, few = nodes = batch.create_nodes(ironic, 3)
        _shrink(nodes[small], memory_mb=2048)
        _shrink(nodes[few], cpus=2)
        rules = [_create_rule(url, r) for r in (sample_rules.BIG,
                                                sample_rules.TOO_FEW_CPUS)]
        listed = requests.get(url + '/v1/rules', timeout=30).json()
        assert [r['uuid'] for r in listed['rules']] == \
            [r['uuid'] for r in rules]
        states = _introspect(ironic, url, nodes)
        assert (states[big]['state'], states[small]['state']) == \
            ('finished', 'finished'), states
        assert (states[few]['state'], states[few]['error']) == \
            ('error', 'Fewer than 3 CPUs')
        _assert_rule_applied(ironic.get_node(big))
        for uuid in (small, few):
            _assert_rule_not_applied(ironic.get_node(uuid))
        _assert_rules_deleted(url)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def _assert_rule_applied(node):
    props = node['properties']
    assert props['capabilities'] == 'cpu_count:4', props
    assert props['rule_cpus'] == '4'
    assert node['traits'] == ['CUSTOM_BIG_MEMORY']
    assert props['memory_mb'] == '8192'


def _assert_rule_not_applied(node):
    props = node['properties']
    assert 'rule_cpus' not in props and 'capabilities' not in props, props
    assert node['traits'] == []


def _assert_rules_deleted(url):
    resp = requests.delete(url + '/v1/rules', timeout=30)
    assert (resp.status_code, resp.text) == (204, '')
    assert resp.headers['Content-Length'] == '0'
    assert resp.headers['Content-Type'].startswith('text/plain')
    assert requests.get(url + '/v1/rules', timeout=30).json() == \
        {'rules': []}


@pytest.mark.parametrize('database', ['pg_url', 'mariadb_url'])
def test_rules_are_stored_and_read_back_on_the_real_databases(request,
                                                              database):
    url = request.getfixturevalue(database)
    migration.upgrade(url)
    store = db_api.Store(url, retry.RetryPolicy(
        'database', 2, 0.05, threading.Event(), db_api.RETRYABLE))
    plugins = plugins_mod.Plugins()
    try:
        created = [store.transaction(rules_db.create,
                                     engine.validate(r, plugins))
                   for r in (sample_rules.BIG,
                             dict(sample_rules.TOO_FEW_CPUS, scope='x' * 255))]
        assert store.transaction(rules_db.list_all) == created
        with pytest.raises(rules_db.Duplicate):
            store.transaction(rules_db.create, engine.validate(
                dict(sample_rules.BIG, uuid=created[0]['uuid']), plugins))
        store.transaction(rules_db.delete, created[0]['uuid'])
        assert store.transaction(rules_db.list_all) == created[1:]
        store.transaction(rules_db.delete_all)
        assert store.transaction(rules_db.list_all) == []
    finally:
        store.dispose()
