"""The sd_notify protocol: one datagram to ``$NOTIFY_SOCKET``.

A unit with ``Type=notify`` is "started" once READY=1 arrives, which a
process sends after its backends are connected and its listener is bound.
Without ``$NOTIFY_SOCKET`` (not under systemd) nothing is sent.
"""

from __future__ import annotations

import logging
import os
import socket

LOG = logging.getLogger(__name__)
ENV = 'NOTIFY_SOCKET'


def notify(state: str) -> bool:
    """Send ``state`` (``READY=1``, ``STOPPING=1``, ...); True if sent."""
    address = os.environ.get(ENV)
    if not address:
        return False
    if address.startswith('@'):  # an abstract socket
        address = '\0' + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(address)
            sock.sendall(state.encode('utf-8'))
        return True
    except OSError as exc:
        LOG.warning('sd_notify %s to %s failed: %s', state, address, exc)
        return False
