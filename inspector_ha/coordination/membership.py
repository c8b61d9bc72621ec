"""Group membership: every process joins, heartbeats and leaves.

A member that leaves (or whose heartbeat lapses) makes every process
reset its leaderships and campaign again, as the HA design says; growth
of the group changes nothing.
"""

import json
import logging
import os
import threading

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
                self._coord.call(self._coord.raw.run_watchers)
        except (retry.BackendUnavailable, retry.Interrupted) as exc:
            self._svc.fail(exc)

    def leave(self):
        try:
            self._coord.raw.leave_group(GROUP).get()
        except coordination.ToozError as exc:
            LOG.warning('Could not leave the group: %s', exc)


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
