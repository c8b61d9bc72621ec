"""Loading processing hooks and running their two phases."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, NoReturn

from stevedore import named

from inspector_ha.processing import base
from inspector_ha.processing import upstream

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
NAMESPACE = 'inspector_ha.hooks.processing'
MALFORMED = (TypeError, AttributeError, KeyError, IndexError, ValueError)


class Pipeline:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        names = [n.strip() for n in conf.processing.processing_hooks
                 .split(',') if n.strip()]
        upstream_names: list[str] = []
        manager = named.NamedExtensionManager(
            NAMESPACE, names, invoke_on_load=True, invoke_args=(conf,),
            name_order=True,
            on_missing_entrypoints_callback=upstream_names.extend,
            on_load_failure_callback=_failed)
        # NOTE: a name missing here may be a plugin written for
        # ironic-inspector (its namespace, its signatures): adapted.
        ours = {ext.name: ext.obj for ext in manager}
        theirs = {hook.name: hook for hook in
                  upstream.processing_hooks(conf, upstream_names)}
        self.hooks: list[base.ProcessingHook] = [
            ours.get(n) or theirs[n] for n in names]

    def before_processing(self, data: dict[str, Any]) -> list[str]:
        """Run every hook's first phase; return the failure messages."""
        failures: list[str] = []
        for hook in self.hooks:
            try:
                hook.before_processing(data)
            except base.HookError as exc:
                failures.append(str(exc))
            except MALFORMED as exc:
                # NOTE: ramdisk data is untrusted input: a hook tripping
                # over an unexpected type is a permanent 400, not a 500.
                LOG.warning('Hook %s failed on malformed data',
                            type(hook).__name__, exc_info=True)
                failures.append('Malformed introspection data (%s): %r' %
                                (type(hook).__name__, exc))
        return failures

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        for hook in self.hooks:
            hook.before_update(data, node)


def _failed(manager: Any, entrypoint: Any, exc: BaseException
            ) -> NoReturn:
    # NOTE: stevedore only logs a hook that fails to load (bad options,
    # a missing file) and runs without it; refuse to start instead.
    raise RuntimeError('Processing hook %s cannot be loaded: %s' %
                       (entrypoint.name, exc)) from exc
