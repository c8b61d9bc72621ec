"""The two options every backend group has: how often a call is tried
and how long to pause between tries (see ``common/retry.py``)."""

from __future__ import annotations

from oslo_config import cfg


def retry_opts(count_help: str, timeout_help: str) -> list[cfg.Opt]:
    """``retry_count`` and ``retry_timeout``, same defaults and bounds in
    every group; the help texts name the backend."""
    return [
        cfg.IntOpt('retry_count', default=5, min=0, max=1000,
                   help=count_help),
        cfg.FloatOpt('retry_timeout', default=1.0, min=0.0, max=300.0,
                     help=timeout_help),
    ]
