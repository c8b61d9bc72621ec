"""oslo.policy rules with upstream's names and new defaults, per route.

:data:`ROUTES` maps ``(method, Flask URL rule)`` to the rule name, the URL
rule with its variables written ``<>`` so the variable names do not
matter. A route missing from it is checked against :data:`FALLBACK`;
``tests/unit/test_auth.py`` fails when a registered route is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from oslo_context import context as context_mod
from oslo_policy import policy

if TYPE_CHECKING:
    from oslo_config import cfg

SYSTEM_ADMIN = 'role:admin and system_scope:all'
SYSTEM_READER = 'role:reader and system_scope:all'
ADMIN = '(%s) or role:admin or role:service' % SYSTEM_ADMIN
# NOTE: upstream's READER: a project-scoped reader reads nothing.
READER = '(%s) or role:admin or role:service' % SYSTEM_READER
PUBLIC = 'rule:public_api'
SCOPES = ['system', 'project']

#: Rules whose routes are public: no credential is asked for them.
PUBLIC_RULES = frozenset(['introspection', 'introspection:version',
                          'introspection:continue'])
FALLBACK = 'introspection:status'

ROUTES = {
    ('GET', '/'): 'introspection',
    ('GET', '/<>'): 'introspection:version',
    ('GET', '/v1/openapi.json'): 'introspection:version',
    ('POST', '/v1/continue'): 'introspection:continue',
    ('GET', '/v1/introspection'): 'introspection:status',
    ('GET', '/v1/introspection/<>'): 'introspection:status',
    ('POST', '/v1/introspection/<>'): 'introspection:start',
    ('POST', '/v1/introspection/<>/abort'): 'introspection:abort',
    ('GET', '/v1/introspection/<>/data'): 'introspection:data',
    ('GET', '/v1/introspection/<>/data/unprocessed'): 'introspection:data',
    ('POST', '/v1/introspection/<>/data/unprocessed'):
        'introspection:reapply',
    ('GET', '/v1/rules'): 'introspection:rule:get',
    ('POST', '/v1/rules'): 'introspection:rule:create',
    ('DELETE', '/v1/rules'): 'introspection:rule:delete',
    ('GET', '/v1/rules/<>'): 'introspection:rule:get',
    ('DELETE', '/v1/rules/<>'): 'introspection:rule:delete',
}

_VARIABLE = re.compile(r'<[^>]*>')


def _rule(name: str, check: str, description: str,
          operations: Iterable[tuple[str, str]]
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{'method': m, 'path': p} for m, p in operations],
        scope_types=SCOPES)


def _api_rules() -> list[policy.DocumentedRuleDefault]:
    return [
        _rule('introspection', PUBLIC, 'Access the API root for available '
              'versions information', [('GET', '/')]),
        _rule('introspection:version', PUBLIC, 'Access the versioned API '
              'root for version information',
              [('GET', '/{version}'), ('GET', '/v1/openapi.json')]),
        _rule('introspection:continue', PUBLIC, 'Ramdisk callback to '
              'continue introspection', [('POST', '/v1/continue')]),
        _rule('introspection:status', READER, 'Get introspection status',
              [('GET', '/v1/introspection'),
               ('GET', '/v1/introspection/{node_id}')]),
        _rule('introspection:start', ADMIN, 'Start introspection',
              [('POST', '/v1/introspection/{node_id}')]),
        _rule('introspection:abort', ADMIN, 'Abort introspection',
              [('POST', '/v1/introspection/{node_id}/abort')]),
        _rule('introspection:data', ADMIN, 'Get introspection data',
              [('GET', '/v1/introspection/{node_id}/data'),
               ('GET', '/v1/introspection/{node_id}/data/unprocessed')]),
        _rule('introspection:reapply', ADMIN, 'Reapply introspection on '
              'stored data',
              [('POST', '/v1/introspection/{node_id}/data/unprocessed')]),
    ]


def _rules_rules() -> list[policy.DocumentedRuleDefault]:
    return [
        _rule('introspection:rule:get', ADMIN, 'Get introspection rule(s)',
              [('GET', '/v1/rules'), ('GET', '/v1/rules/{rule_id}')]),
        _rule('introspection:rule:delete', ADMIN, 'Delete introspection '
              'rule(s)', [('DELETE', '/v1/rules'),
                          ('DELETE', '/v1/rules/{rule_id}')]),
        _rule('introspection:rule:create', ADMIN, 'Create introspection '
              'rule', [('POST', '/v1/rules')]),
    ]


def list_policies() -> list[policy.RuleDefault]:
    """Every rule, for the enforcer and the ``oslo.policy.policies`` hook."""
    base = [policy.RuleDefault('public_api', 'is_public_api:True',
                               description='Internal flag for public API '
                                           'routes'),
            policy.RuleDefault('default', '!',
                               description='Default API access policy')]
    return base + _api_rules() + _rules_rules()


def enforcer(conf: cfg.ConfigOpts) -> policy.Enforcer:
    """An enforcer over ``conf``'s ``[oslo_policy]`` with our defaults."""
    result = policy.Enforcer(conf)
    result.suppress_default_change_warnings = True
    result.register_defaults(list_policies())
    return result


def route_key(method: str, url_rule: str) -> tuple[str, str]:
    """The :data:`ROUTES` key of a Flask URL rule; HEAD is a GET."""
    method = 'GET' if method == 'HEAD' else method
    return method, _VARIABLE.sub('<>', url_rule).rstrip('/') or '/'


def rule_for(method: str, url_rule: str) -> str:
    """The rule name of a request to ``url_rule``."""
    return ROUTES.get(route_key(method, url_rule), FALLBACK)


def credentials(environ: dict[str, Any], public: bool) -> dict[str, Any]:
    """Policy values of the headers keystonemiddleware set in ``environ``."""
    ctx = context_mod.RequestContext.from_environ(environ)
    return dict(ctx.to_policy_values(), is_public_api=public)


def authorized(enforcer_: policy.Enforcer, rule: str,
               creds: dict[str, Any]) -> bool:
    return enforcer_.authorize(rule, {}, creds)
