"""The shipped alerting rules and dashboard, and the series they name:
every name must be one the service's processes export."""

import json
import re

import yaml

from backends import REPO_ROOT

RULES = REPO_ROOT / 'etc' / 'prometheus' / 'inspector-ha.rules.yaml'
RULES_TEST = REPO_ROOT / 'tests' / 'prometheus' / 'alerts_test.yaml'
#: The rules as the Prometheus Operator takes them (a generated copy).
PROMETHEUS_RULE = (REPO_ROOT / 'deploy' / 'kubernetes' / 'overlays' /
                   'prometheus-rules' / 'prometheusrule.yaml')
DASHBOARD = REPO_ROOT / 'etc' / 'grafana' / 'inspector-ha.json'

_NAME = re.compile(r'\b(inspector_ha_\w+|process_start_time_seconds)\b')
_HISTOGRAM_SERIES = ('_bucket', '_count', '_sum')


def expressions():
    """Every PromQL expression of the rules and of the dashboard."""
    rules = yaml.safe_load(RULES.read_text())
    found = [rule['expr'] for group in rules['groups']
             for rule in group['rules']]
    dashboard = json.loads(DASHBOARD.read_text())
    found += [target['expr'] for panel in dashboard['panels']
              for target in panel['targets']]
    return found


def named_series():
    """The series names the expressions use."""
    return {name for expr in expressions() for name in _NAME.findall(expr)}


def exported(exposition):
    """The series names a ``/metrics`` text can hold (its families, with
    a histogram's ``_bucket``, ``_count`` and ``_sum``), samples or not."""
    names = set()
    for line in exposition.splitlines():
        if line.startswith('# TYPE '):
            _, _, name, kind = line.split()
            names.add(name)
            if kind == 'histogram':
                names.update(name + s for s in _HISTOGRAM_SERIES)
    return names
