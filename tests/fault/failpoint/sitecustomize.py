"""Fault injection at one exact point of a real worker process, for the
fault suite only: a worker started with this directory on its
``PYTHONPATH`` and ``INSPECTOR_HA_FREEZE_AFTER_CLAIM=<effect>``
(``power-on``) stops itself with SIGSTOP right after its first claim of
that effect is committed, before its Ironic call, and writes the node's
UUID to ``INSPECTOR_HA_FREEZE_MARK`` first. The test wakes it with
SIGCONT. Python imports ``sitecustomize`` at start-up; nothing of the
service is changed on disk.
"""

import os
import signal
import threading

_EFFECT = os.environ.get('INSPECTOR_HA_FREEZE_AFTER_CLAIM')


def _install(effect, mark):
    from inspector_ha.engine import claims

    claim = claims.Claims.claim
    frozen = []

    def claim_then_freeze(self, node, which):
        outcome, got = claim(self, node, which)
        if which == effect and got is not None and not frozen:
            frozen.append(node.uuid)
            with open(mark, 'w') as out:
                out.write(node.uuid)
            # NOTE: to this thread: a SIGSTOP sent to the process may be
            # taken by another thread, and this one run on into its call
            # before the group stop reaches it (CI, 2026-12-07).
            signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)
        return outcome, got

    claims.Claims.claim = claim_then_freeze


if _EFFECT:
    _install(_EFFECT, os.environ['INSPECTOR_HA_FREEZE_MARK'])
