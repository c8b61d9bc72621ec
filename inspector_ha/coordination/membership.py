"""Group membership: every process joins, heartbeats and leaves.

A member that leaves (or whose heartbeat lapses) makes every process
reset its leaderships and campaign again (the reset flag of
doc/design.md); growth of the group changes nothing.
"""

import json
import logging
import os
import threading

import tooz
from tooz import coordination

from inspector_ha.common import retry

LOG = logging.getLogger(__name__)
GROUP = b'inspector_ha.members'


class Membership(threading.Thread):
    def __init__(self, service, roles, on_shrink):
        super().__init__(name='membership', daemon=True)
        self._svc = service
        self._coord = service.coordinator
        self._on_shrink = on_shrink
        self.capabilities = {'host': service.conf.host, 'pid': os.getpid(),
                             'version': _version(), 'roles': list(roles)}

    def enter(self):
        """Join the group and watch it; call before ``start()``."""
        caps = json.dumps(self.capabilities).encode()
        self._coord.call(_join, self._coord.raw, GROUP, caps)
        self._coord.call(self._coord.raw.watch_leave_group, GROUP,
                         self._left)

    def _left(self, event):
        LOG.info('Member %s left; resetting leaderships',
                 event.member_id.decode())
        self._on_shrink()

    def run(self):
        period = self._svc.conf.coordination.watch_period
        try:
            while not self._svc.stop.wait(period):
                self._watch_once()
        except (retry.BackendUnavailable, retry.Interrupted) as exc:
            self._svc.fail(exc)
        except Exception as exc:
            LOG.exception('Membership watch failed')
            self._svc.fail(exc)

    def _watch_once(self):
        try:
            self._coord.call(self._probe)
            self._coord.call(self._coord.raw.run_watchers)
            self._publish_counters()
        except retry.BackendUnavailable as exc:
            self._unreachable(exc)
        except coordination.ToozError as exc:
            # NOTE: kazoo may surface a lost server as a bare ToozError
            # (tooz's zookeeper driver, listing the group).
            self._unreachable(retry.BackendUnavailable('coordination', exc))

    def _unreachable(self, exc):
        """A worker must stop (the partition rule of doc/design.md); an API
        process needs no coordination to serve, so it carries on."""
        if 'worker' in self.capabilities['roles']:
            raise exc
        LOG.warning('Coordination unreachable: %s', exc)

    def _publish_counters(self):
        """Show the fenced writes of this member's leaderships and its
        firewall state in its capabilities (``inspector-ha-status``)."""
        shown = dict(self.capabilities)
        shown['fenced_writes'] = {t.task: t.fenced_writes
                                  for t in self._svc.leader_tasks
                                  if t.fenced_writes}
        if self._svc.firewall is not None:
            shown['firewall'] = {k: v for k, v in
                                 self._svc.firewall.describe().items()
                                 if k != 'lease_remaining'}
        if shown == self.capabilities:
            return
        self.capabilities = shown
        caps = json.dumps(self.capabilities).encode()
        try:
            self._coord.call(lambda: self._coord.raw.update_capabilities(
                GROUP, caps).get())
        except tooz.NotImplemented:
            LOG.info('Fenced writes (not shown by this coordination '
                     'backend): %s', shown['fenced_writes'])

    def _probe(self):
        """Prove the backend answers within the lease; rejoin if expelled.

        Some drivers (kazoo for ZooKeeper) block rather than fail while
        disconnected; a bounded round trip turns that into an error that
        the retry policy counts, so the process stops once the budget is
        spent instead of acting on a coordination it cannot see. A member
        whose heartbeat lapsed (a paused process) has been dropped from
        the group (the others reset their leaderships): it joins again.
        """
        timeout = self._svc.conf.coordination.lease_timeout
        try:
            members = self._coord.raw.get_members(GROUP).get(
                timeout=timeout)
        except coordination.ToozConnectionError:
            raise
        except Exception as exc:
            raise coordination.ToozConnectionError(
                'coordination backend not answering: %r' % exc) from exc
        if self._svc.member_id.encode() not in members:
            LOG.warning('This member was dropped from the group (its '
                        'heartbeat lapsed); joining again')
            _join(self._coord.raw, GROUP,
                  json.dumps(self.capabilities).encode())

    def leave(self):
        timeout = self._svc.conf.coordination.lease_timeout
        try:
            self._coord.raw.leave_group(GROUP).get(timeout=timeout)
        except Exception as exc:
            LOG.warning('Could not leave the group (the backend will '
                        'expire the membership): %r', exc)


def _join(raw, group, capabilities):
    try:
        raw.join_group(group, capabilities).get()
    except coordination.GroupNotCreated:
        try:
            raw.create_group(group).get()
        except coordination.GroupAlreadyExist:
            pass
        raw.join_group(group, capabilities).get()
    except coordination.MemberAlreadyExist:
        pass


def members(raw):
    """``{member_id: capabilities}`` of the group."""
    result = {}
    for member in raw.get_members(GROUP).get():
        caps = raw.get_member_capabilities(GROUP, member).get()
        result[member.decode()] = json.loads(caps or b'{}')
    return result


def _version():
    from importlib import metadata
    try:
        return metadata.version('inspector-ha')
    except metadata.PackageNotFoundError:
        return 'unknown'
