"""The policy table: upstream's rule names, a rule for every route.

How each role fares against a real Keystone, through keystonemiddleware,
is ``tests/functional/test_keystone.py``'s.
"""

from oslo_policy import opts as policy_opts
import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.api import policy

UPSTREAM_NAMES = {
    'introspection', 'introspection:version', 'introspection:start',
    'introspection:status', 'introspection:abort', 'introspection:data',
    'introspection:reapply', 'introspection:continue',
    'introspection:rule:get', 'introspection:rule:create',
    'introspection:rule:delete'}


@pytest.fixture
def keystone_conf(service_conf):
    service_conf.register_opts(policy_opts.list_opts()[0][1],
                               group='oslo_policy')
    service_conf.set_override('auth_strategy', 'keystone')
    return service_conf


def test_every_route_of_the_app_has_a_rule_in_the_table(service):
    app = app_mod.create_app(service)
    missing = [(m, r.rule) for r in app.url_map.iter_rules()
               for m in r.methods - {'HEAD', 'OPTIONS'}
               if r.endpoint != 'static'
               and policy.route_key(m, r.rule) not in policy.ROUTES]
    assert not missing


def test_the_table_uses_upstreams_rule_names_only():
    registered = {rule.name for rule in policy.list_policies()}
    assert set(policy.ROUTES.values()) == UPSTREAM_NAMES
    assert UPSTREAM_NAMES <= registered


def test_a_route_missing_from_the_table_falls_back_to_the_status_rule():
    assert policy.rule_for('GET', '/v1/new/<x>') == 'introspection:status'
    assert policy.rule_for('HEAD', '/v1/rules/<uuid>/') == \
        'introspection:rule:get'


@pytest.mark.parametrize('public, allowed', [(True, True), (False, False)])
def test_public_rules_allow_only_requests_to_public_routes(
        keystone_conf, public, allowed):
    enforcer = policy.enforcer(keystone_conf)
    creds = policy.credentials({}, public)
    assert policy.authorized(enforcer, 'introspection:continue',
                             creds) is allowed
