"""The shipped Prometheus rules pass promtool and their own unit tests,
and the rules and the dashboard name only series the service defines
(tests/functional/test_observability.py checks them against a running
cluster's scrapes)."""

import subprocess

import prometheus_client
import yaml

import monitoring
import needs
from inspector_ha.common import metrics  # noqa: F401  (registers them)


def _promtool(*args):
    promtool = needs.tool('promtool', 'prometheus')
    return subprocess.run([promtool, *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_alerting_rules_are_valid_for_promtool():
    checked = _promtool('check', 'rules', monitoring.RULES)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_each_alert_fires_on_its_fault_and_not_on_a_healthy_cluster():
    tested = _promtool('test', 'rules', monitoring.RULES_TEST)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_is_tested():
    rules = set(_alert_names(monitoring.RULES.read_text()))
    tested = set(_alert_names(monitoring.RULES_TEST.read_text(),
                              key='alertname:'))
    assert rules and rules == tested, rules ^ tested


def test_the_rules_and_the_dashboard_name_only_defined_series():
    defined = monitoring.exported(
        prometheus_client.generate_latest(prometheus_client.REGISTRY)
        .decode())
    assert monitoring.named_series() - defined == set()


def _alert_names(text, key='- alert:'):
    return [line.split(':', 1)[1].strip() for line in text.splitlines()
            if line.strip().startswith(key)]


def test_the_prometheusrule_overlay_carries_the_rule_file_unchanged():
    overlay = yaml.safe_load(monitoring.PROMETHEUS_RULE.read_text())
    assert overlay['kind'] == 'PrometheusRule'
    assert overlay['spec'] == yaml.safe_load(monitoring.RULES.read_text()), (
        'run python3 tools/make-prometheusrule.py')
