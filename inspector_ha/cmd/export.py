"""``inspector-ha-dbsync export-to-ironic [--ironic-url URL] [--dry-run]``:
the way on to Ironic's built-in inspection.

Converts the introspection rules into Ironic inspection rules (see
:mod:`inspector_ha.rules.export`) and creates those Ironic lacks, under
the same UUIDs, so a second run creates nothing. A rule that cannot be
converted is listed with the reason. Introspection data is not carried:
Ironic has no API that stores a node's inspection data (it keeps only
what its own inspection collects).
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from inspector_ha.cmd import upgrades
from inspector_ha.db import rules as rules_db
from inspector_ha.ironic import client as ironic_client
from inspector_ha.rules import export

if TYPE_CHECKING:
    from oslo_config import cfg

EXPORT = 'export-to-ironic'
RULES_PATH = '/inspection_rules'


def add_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        EXPORT, help="convert the introspection rules into Ironic's "
        'inspection rules (API %s)' % export.API_VERSION)
    parser.add_argument('--ironic-url', default=None,
                        help="Ironic's URL (default: [ironic] as the "
                             'service finds it)')
    parser.add_argument('--dry-run', action='store_true',
                        help='print the converted rules; write nothing')


def run(conf: cfg.ConfigOpts) -> int:
    rules = upgrades.store(conf).transaction(rules_db.list_all)
    converted, refused = export.convert_all(rules)
    for uuid, why in refused.items():
        print('not converted: rule %s: %s' % (uuid, why))
    if conf.command.dry_run:
        print(json.dumps(converted, indent=2, sort_keys=True))
        created = present = 0
    else:
        created, present = _create(conf, converted)
    print('rules: %d, converted %d (created %d, already in Ironic %d), '
          'not converted %d' % (len(rules), len(converted), created,
                                present, len(refused)))
    print("introspection data: not exported (Ironic has no API that "
          "stores a node's inspection data)")
    return 0


def _create(conf: cfg.ConfigOpts,
            converted: list[dict[str, Any]]) -> tuple[int, int]:
    """Create the rules Ironic lacks: ``(created, already there)``."""
    if conf.command.ironic_url:
        conf.set_override('endpoint_override', conf.command.ironic_url,
                          group=ironic_client.GROUP)
    ironic = ironic_client.connect(conf, threading.Event())
    there = _listed(ironic)
    missing = [rule for rule in converted if rule['uuid'] not in there]
    for rule in missing:
        ironic.api('POST', RULES_PATH, export.API_VERSION, json=rule)
    return len(missing), len(converted) - len(missing)


def _listed(ironic: ironic_client.Ironic) -> set[str]:
    """The UUIDs of Ironic's inspection rules, every page. NOTE: by
    marker: the ``next`` links of Ironic 39's list are wrong."""
    found: set[str] = set()
    query: dict[str, str] = {}
    while True:
        page = ironic.api('GET', RULES_PATH, export.API_VERSION,
                          params=query)
        uuids = [rule['uuid'] for rule in page['inspection_rules']]
        found.update(uuids)
        if not page.get('next') or not uuids:
            return found
        query = {'marker': uuids[-1]}
