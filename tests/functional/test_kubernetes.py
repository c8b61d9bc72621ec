"""deploy/kubernetes: every rendered document is valid against the
Kubernetes schemas (kubernetes-validate), and the HA conventions hold:
2+ API replicas, PodDisruptionBudgets, spread over hosts (and zones in
the overlay), readiness on /healthcheck and liveness on /livez, grace
periods past the drain."""

import pathlib

import kubernetes_validate
import pytest

import kustomize
from inspector_ha.api import health
from inspector_ha.conf import api as api_opts
from inspector_ha.conf import worker as worker_opts

ROOT = pathlib.Path(__file__).resolve().parents[2] / 'deploy' / 'kubernetes'
BASE = ROOT / 'base'
ZONES = ROOT / 'overlays' / 'zones'
HOST_NETWORK = ROOT / 'overlays' / 'host-network-workers'
RULES = ROOT / 'overlays' / 'prometheus-rules'
KUBERNETES = '1.30.0'
HOST = 'kubernetes.io/hostname'
ZONE = 'topology.kubernetes.io/zone'


def _default(opts, name):
    return next(o.default for o in opts.OPTS if o.name == name)


def _one(docs, kind, name):
    found = [d for d in docs if d['kind'] == kind and
             d['metadata']['name'] == name]
    assert len(found) == 1, (kind, name)
    return found[0]


def _pod(docs, name):
    return _one(docs, 'Deployment', name)['spec']['template']['spec']


def _spread(docs, name):
    return {c['topologyKey']: c for c in
            _pod(docs, name)['topologySpreadConstraints']}


@pytest.mark.parametrize('directory', [BASE, ZONES, HOST_NETWORK],
                         ids=lambda d: d.name)
def test_every_rendered_document_is_valid_for_kubernetes(directory):
    docs = kustomize.render(directory)
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)
    rendered = kustomize.kubectl(directory)
    if rendered is not None:
        key = lambda d: (d['kind'], d['metadata']['name'])  # noqa: E731
        assert sorted(rendered, key=key) == sorted(docs, key=key)


def test_two_or_more_api_replicas_spread_over_hosts_best_effort():
    docs = kustomize.render(BASE)
    assert _one(docs, 'Deployment', 'inspector-ha-api')['spec'][
        'replicas'] >= 2
    for name in ('inspector-ha-api', 'inspector-ha-worker'):
        spread = _spread(docs, name)
        assert set(spread) == {HOST}
        assert spread[HOST]['whenUnsatisfiable'] == 'ScheduleAnyway'
        assert spread[HOST]['maxSkew'] == 1


def test_the_zone_overlay_also_spreads_over_zones_strictly():
    docs = kustomize.render(ZONES)
    for name in ('inspector-ha-api', 'inspector-ha-worker'):
        spread = _spread(docs, name)
        assert spread[HOST]['whenUnsatisfiable'] == 'ScheduleAnyway'
        assert spread[ZONE]['whenUnsatisfiable'] == 'DoNotSchedule'


@pytest.mark.parametrize('directory', [BASE, ZONES, HOST_NETWORK],
                         ids=lambda d: d.name)
def test_each_deployment_has_a_matching_budget_and_spread_selector(
        directory):
    docs = kustomize.render(directory)
    for deployment in (d for d in docs if d['kind'] == 'Deployment'):
        name = deployment['metadata']['name']
        labels = deployment['spec']['template']['metadata']['labels']
        budget = _one(docs, 'PodDisruptionBudget', name)
        assert budget['spec']['maxUnavailable'] == 1
        assert budget['spec']['selector']['matchLabels'].items() <= \
            labels.items()
        for constraint in _spread(docs, name).values():
            assert constraint['labelSelector']['matchLabels'].items() <= \
                labels.items()


def test_readiness_asks_the_backends_liveness_only_the_process():
    docs = kustomize.render(BASE)
    bounds = {'inspector-ha-api': _default(api_opts, 'drain_time') +
              _default(api_opts, 'shutdown_timeout'),
              'inspector-ha-worker': _default(worker_opts,
                                              'shutdown_timeout')}
    for name, bound in bounds.items():
        pod = _pod(docs, name)
        assert pod['terminationGracePeriodSeconds'] > bound
        container, = pod['containers']
        # NOTE: a liveness probe on /healthcheck restarted every pod of a
        # backend outage at once (issue 55).
        assert container['readinessProbe']['httpGet']['path'] == (
            health.PATH)
        assert container['livenessProbe']['httpGet']['path'] == (
            health.LIVE_PATH)


def test_configuration_comes_from_the_configmap_and_the_secret():
    docs = kustomize.render(BASE)
    _one(docs, 'ConfigMap', 'inspector-ha-config')
    _one(docs, 'Secret', 'inspector-ha-secrets')
    pods = [_pod(docs, 'inspector-ha-api'), _pod(docs, 'inspector-ha-worker'),
            _one(docs, 'Job', 'inspector-ha-dbsync')['spec']['template'][
                'spec']]
    for pod in pods:
        sources = {v.get('configMap', {}).get('name') or
                   v.get('secret', {}).get('secretName')
                   for v in pod['volumes']}
        assert {'inspector-ha-config', 'inspector-ha-secrets'} <= sources
        command = pod['containers'][0]['args']
        assert '--config-file=/etc/inspector-ha/secret/secrets.conf' in \
            command
    assert pods[2]['containers'][0]['args'][0] == 'inspector-ha-dbsync'
    assert pods[2]['containers'][0]['args'][-1] == 'upgrade'


def test_the_host_network_workers_may_change_the_host_firewall():
    docs = kustomize.render(HOST_NETWORK)
    pod = _pod(docs, 'inspector-ha-worker')
    assert pod['hostNetwork'] is True
    assert pod['dnsPolicy'] == 'ClusterFirstWithHostNet'
    assert set(pod['containers'][0]['securityContext']['capabilities'][
        'add']) == {'NET_ADMIN', 'NET_RAW'}
    assert 'hostNetwork' not in _pod(docs, 'inspector-ha-api')


def test_the_rules_overlay_adds_one_prometheusrule_to_the_base():
    base = kustomize.render(BASE)
    docs = kustomize.render(RULES)
    added = [d for d in docs if d not in base]
    assert len(docs) == len(base) + 1
    assert [d['kind'] for d in added] == ['PrometheusRule']
    assert added[0]['spec']['groups'][0]['rules']
