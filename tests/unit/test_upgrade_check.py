"""``inspector-ha-status upgrade check``, run as the shipped console
script, with oslo.upgradecheck's exit codes (0, 1 warning, 2 failure)."""

import json
import pathlib
import subprocess
import sys

from tooz import coordination

from inspector_ha.coordination import membership
from inspector_ha.coordination import releases
from inspector_ha.db import migration

BIN = pathlib.Path(sys.executable).parent
#: The release before this one.
PREVIOUS = sorted(releases.RELEASES, key=lambda r: tuple(
    int(n) for n in r.split('.')))[-2]


def _conf(tmp_path, url, pin=None):
    conf = tmp_path / 'status.conf'
    conf.write_text('[DEFAULT]\nstate_path = %s\n%s[database]\nconnection = '
                    '%s\n[coordination]\nbackend_url = file://%s\n'
                    % (tmp_path, 'pin_release_version = %s\n' % pin
                       if pin else '', url, tmp_path / 'coordination'))
    return conf


def check(conf):
    done = subprocess.run([BIN / 'inspector-ha-status', '--config-file',
                           conf, 'upgrade', 'check', '--json'],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    checks = json.loads(done.stdout.strip().splitlines()[-1])['checks']
    return done.returncode, {c['check']: (c['result'], c['details'])
                             for c in checks}


def test_a_fully_upgraded_quiet_deployment_passes_every_check(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'db.sqlite')
    migration.upgrade(url)
    code, checks = check(_conf(tmp_path, url))
    assert code == 0, checks
    assert {r for r, _ in checks.values()} == {0}


def test_a_0_1_0_schema_warns_that_expand_is_pending(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'db.sqlite')
    migration.upgrade(url, '0003')
    code, checks = check(_conf(tmp_path, url))
    assert code == 1
    assert checks['Schema'][0] == 1
    assert 'upgrade --expand' in checks['Schema'][1]


def test_mixed_members_and_a_pending_contract_are_named(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'db.sqlite')
    migration.upgrade(url, migration.EXPAND)
    conf = _conf(tmp_path, url, pin=PREVIOUS)
    backend = 'file://%s' % (tmp_path / 'coordination')
    members = []
    for name, version in ((b'old-1', PREVIOUS),
                          (b'new-1', releases.CURRENT)):
        member = coordination.get_coordinator(backend, name)
        member.start(start_heart=True)
        try:
            member.create_group(membership.GROUP).get()
        except coordination.GroupAlreadyExist:
            pass
        member.join_group(membership.GROUP, json.dumps(
            {'version': version}).encode()).get()
        members.append(member)
    try:
        code, checks = check(conf)
        assert code == 1
        assert checks['Member versions'][0] == 1
        assert 'old-1: %s' % PREVIOUS in checks['Member versions'][1]
        assert 'new-1: %s' % releases.CURRENT in checks['Member versions'][1]
        assert checks['Contract migrations'][0] == 0
        assert "['old-1']" in checks['Contract migrations'][1]
        assert checks['Release pin'] == (
            0, 'pin_release_version = %s.' % PREVIOUS)
        members[0].leave_group(membership.GROUP).get()
        code, checks = check(conf)
        assert checks['Contract migrations'][0] == 1
        assert checks['Release pin'][0] == 1
    finally:
        for member in members:
            member.stop()


def test_an_unreadable_database_is_a_failure(tmp_path):
    url = 'postgresql+psycopg2://nobody@127.0.0.1:1/none'
    code, checks = check(_conf(tmp_path, url))
    assert code == 2
    assert checks['Schema'][0] == 2
