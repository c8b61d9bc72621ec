"""Options that name a plugin, and the plugins' own options.

A driver is a module plus an entry point, and it reads an option group of
its own (as tooz's drivers do): ``[pxe_filter] driver`` names an entry
point of ``inspector_ha.pxe_filter``, ``[processing] store_data`` one of
``inspector_ha.introspection_data.store``. The entry points are the only
list of what is installed, so a package other than inspector-ha adds a
driver by declaring one.

A plugin with options of its own has ``list_opts()`` returning
``[(group, [opts])]`` (a hook: ``OPTIONS``, see
``inspector_ha.processing.base.OwnOptions``). They are registered when it
is loaded, and at start-up for the chosen plugins and hooks
(:func:`register_chosen`, so that a bad value is one line there);
:func:`list_opts` collects those of every installed plugin and hook for
the sample configuration.
"""

from __future__ import annotations

import importlib.metadata
import logging
import typing

if typing.TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)


class Selector(typing.NamedTuple):
    """An option whose value is the name of an entry point."""
    group: str
    name: str
    namespace: str
    what: str


SELECTORS = (
    Selector('pxe_filter', 'driver', 'inspector_ha.pxe_filter',
             'PXE filter driver'),
    Selector('processing', 'store_data',
             'inspector_ha.introspection_data.store', 'data store'),
)
#: Options naming hooks (comma-separated): a chosen hook's own options
#: are registered at start-up; a name of no entry point is left to the
#: pipeline (an ironic-inspector hook it adapts, or its error).
HOOKS = (
    Selector('processing', 'processing_hooks',
             'inspector_ha.hooks.processing', 'processing hook'),
    Selector('processing', 'node_not_found_hook',
             'inspector_ha.hooks.node_not_found', 'node-not-found hook'),
)


def _entry_points(
        namespace: str) -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep
            for ep in importlib.metadata.entry_points(group=namespace)}


def installed(namespace: str) -> list[str]:
    """The names of the plugins installed in ``namespace``, sorted."""
    return sorted(_entry_points(namespace))


def _chosen(conf: cfg.ConfigOpts,
            selector: Selector) -> importlib.metadata.EntryPoint:
    """The entry point named by the selector's value in ``conf``;
    ValueError naming the installed ones if there is none."""
    value = conf[selector.group][selector.name]
    found = _entry_points(selector.namespace)
    if value not in found:
        raise ValueError('no %s %r (installed: %s)' % (
            selector.what, value, ', '.join(sorted(found))))
    return found[value]


def check(conf: cfg.ConfigOpts, group: str, name: str) -> None:
    """ValueError if ``[group] name`` names a plugin that is not
    installed (nothing if it names no plugin)."""
    for selector in SELECTORS:
        if (selector.group, selector.name) == (group, name):
            _chosen(conf, selector)


def _own_opts(entry_point: importlib.metadata.EntryPoint
              ) -> list[tuple[str, list[cfg.Opt]]]:
    plugin = entry_point.load()
    lister = getattr(plugin, 'list_opts', None)
    return list(lister()) if lister is not None else []


def register_chosen(
        conf: cfg.ConfigOpts) -> list[tuple[str, list[cfg.Opt]]]:
    """Check every option naming a plugin, and register the chosen
    plugins' and hooks' own options on ``conf``; return them as
    ``[(group, [opts])]``. ValueError, starting with the option, if a
    plugin is not installed or cannot be loaded."""
    result: list[tuple[str, list[cfg.Opt]]] = []
    for selector in SELECTORS:
        try:
            entry_point = _chosen(conf, selector)
        except ValueError as exc:
            raise ValueError('%s: %s' % (_where(selector), exc)) from None
        result += _register(conf, selector, entry_point)
    for selector in HOOKS:
        found = _entry_points(selector.namespace)
        value = conf[selector.group][selector.name] or ''
        for name in value.split(','):
            hook = found.get(name.strip())
            if hook is not None:
                result += _register(conf, selector, hook)
    return result


def _where(selector: Selector) -> str:
    return '[%s] %s' % (selector.group, selector.name)


def _register(conf: cfg.ConfigOpts, selector: Selector,
              entry_point: importlib.metadata.EntryPoint
              ) -> list[tuple[str, list[cfg.Opt]]]:
    """Register the own options of the plugin ``selector`` chose; any
    failure to load it is one line naming the option."""
    try:
        groups = _own_opts(entry_point)
    except Exception as exc:  # noqa - any import error: one line
        raise ValueError('%s: cannot load %s %r: %s' % (
            _where(selector), selector.what, entry_point.name,
            exc)) from exc
    for group, opts in groups:
        conf.register_opts(opts, group=group)
    return groups


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """``[(group, [opts])]`` of every installed plugin's own options; a
    plugin that cannot be loaded is logged and left out."""
    found: dict[str, list[cfg.Opt]] = {}
    for selector in SELECTORS + HOOKS:
        for name, entry_point in sorted(
                _entry_points(selector.namespace).items()):
            try:
                groups = _own_opts(entry_point)
            except Exception as exc:  # noqa - listing must not fail
                LOG.warning('%s %r cannot be loaded, its options are not '
                            'listed: %s', selector.what, name, exc)
                continue
            for group, opts in groups:
                mine = found.setdefault(group, [])
                mine.extend(o for o in opts if o not in mine)
    return list(found.items())
