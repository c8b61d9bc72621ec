"""An existing ``ironic-inspector.conf`` read by inspector-ha.

oslo.config ignores options nobody registered, without a word. Here the
files a process was started with are read raw, and every option set in
them that inspector-ha does not use is named in ONE warning at start-up
(:func:`warn_unused`); ``inspector-ha-dbsync
check-ironic-inspector-config FILE`` (:func:`check_file`) reports the
same before the switch, plus the values inspector-ha would refuse.

``ironic_inspector_12_5.json`` beside this module lists upstream 12.5's
options (from its oslo-config-generator namespaces) with their types and
bounds, to tell an upstream option from a typo; the unit tests check
that each one inspector-ha implements accepts at least upstream's range.
It was made from ``.venv-inspector-12.5/bin/oslo-config-generator
--format json`` with the namespaces ironic_inspector, oslo.db, oslo.log,
oslo.messaging, oslo.middleware.cors, oslo.middleware.healthcheck,
oslo.middleware.http_proxy_to_wsgi, oslo.policy and
keystonemiddleware.auth_token, keeping each option's dest, type, min, max
and choices.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.resources
import json
import logging
import os
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from oslo_config import cfg

from inspector_ha.conf import plugins

LOG = logging.getLogger(__name__)
DEFAULT = 'DEFAULT'
UPSTREAM = 'ironic_inspector_12_5.json'
KEYSTONE_AUTHTOKEN = 'keystone_authtoken'
#: ``(group, name)`` of an option.
Key = tuple[str, str]
#: ``(group, [opts])``, as a library lists its options (oslo.config's
#: or keystoneauth's ``Opt``, both with a ``dest``).
Listed = tuple[str | None, list[Any]]
#: ``((group, name), value, reason)`` of a value refused.
Refusal = tuple[Key, str, str]


@functools.lru_cache(maxsize=None)
def upstream_options() -> dict[str, dict[str, dict[str, Any]]]:
    """``{group: {name: {type, min, max, choices}}}`` of 12.5."""
    text = importlib.resources.files('inspector_ha.conf').joinpath(
        UPSTREAM).read_text()
    return json.loads(text)


def set_in(paths: Iterable[str]) -> dict[Key, str]:
    """``{(group, name): value}`` of every option set in ``paths``."""
    found = {}
    for path in paths:
        sections: dict[str, dict[str, list[str]]] = {}
        cfg.ConfigParser(path, sections).parse()
        for group, options in sections.items():
            for name, values in options.items():
                found[(group, name.replace('-', '_'))] = values[-1]
    return found


def raw_value(path: str, group: str, name: str) -> str | None:
    """The value of ``[group] name`` in the file ``path``, or None."""
    return set_in([path]).get((group, name))


def known(conf: cfg.ConfigOpts, groups: Collection[str] = ()) -> set[Key]:
    """``{(group, name)}`` inspector-ha registers or hands to a library
    that registers it when used (keystonemiddleware, keystoneauth's auth
    plugins for ``[ironic]``, oslo.messaging's drivers). Libraries are
    imported only for the ``groups`` a file sets."""
    result = set()
    for group, opts in _library_opts(_auth_type(conf), groups):
        for opt in opts:
            result.add((group or DEFAULT, opt.dest))
            result.update(_deprecated_names(group or DEFAULT, opt))
    result.update(_registered(conf))
    return result


def _deprecated_names(group: str, opt: Any) -> Iterator[Key]:
    """The old names an option also reads (``[DEFAULT]
    introspection_delay`` for ``[worker] reboot_throttle``)."""
    for old in getattr(opt, 'deprecated_opts', None) or ():
        yield (old.group or group, old.name or opt.dest)


def _auth_type(conf: cfg.ConfigOpts) -> str | None:
    try:
        return conf.ironic.auth_type
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return None


def _registered(conf: cfg.ConfigOpts) -> Iterator[Key]:
    """``(group, name)`` of every option registered in ``conf``
    (iterating a ``ConfigOpts`` gives its options' and groups' names)."""
    for name in conf:
        try:
            group = conf[name]
        except cfg.Error:
            group = None  # NOTE: an option of [DEFAULT] with a bad value
        if isinstance(group, cfg.ConfigOpts.GroupAttr):
            yield from ((name, opt) for opt in group)
        else:
            yield DEFAULT, name


def _library_opts(auth_type: str | None,
                  groups: Collection[str]) -> list[Listed]:
    from keystoneauth1 import exceptions
    from keystoneauth1 import loading
    result: list[Listed] = []
    for namespace in _namespaces(groups):
        result.extend(_listed(namespace))
    if auth_type:
        try:
            result.append(('ironic', loading.get_plugin_options(auth_type)))
        except exceptions.NoMatchingPlugin:
            pass
    return result


def _namespaces(groups: Collection[str]) -> Iterator[str]:
    """The ``oslo.config.opts`` namespaces whose options a file may set:
    keystonemiddleware's only when it sets ``[keystone_authtoken]`` (it
    costs a process about 4 MB of RSS)."""
    yield from ('inspector-ha', 'oslo.messaging', 'oslo.log')
    if KEYSTONE_AUTHTOKEN in groups:
        yield 'keystonemiddleware.auth_token'


def _listed(namespace: str) -> list[Listed]:
    """``[(group, [opts])]`` of a namespace, through its entry point in
    ``oslo.config.opts`` (where oslo-config-generator reads it)."""
    found = importlib.metadata.entry_points(group='oslo.config.opts',
                                            name=namespace)
    return [item for entry in found for item in entry.load()()]


def files_of(conf: cfg.ConfigOpts) -> list[str]:
    """The configuration files ``conf`` was loaded from, in order."""
    paths = list(conf.config_file or [])
    for directory in conf.config_dir or []:
        if os.path.isdir(directory):
            paths.extend(os.path.join(directory, f) for f in sorted(
                os.listdir(directory)) if f.endswith('.conf'))
    return [p for p in paths if os.path.isfile(p)]


def unused(conf: cfg.ConfigOpts,
           paths: Iterable[str]) -> tuple[list[Key], list[Key]]:
    """Options set in ``paths`` that inspector-ha does not use, split into
    ``(upstream 12.5 options, others)``, each sorted."""
    upstream = upstream_options()
    found = set_in(paths)
    ours = known(conf, {group for group, _ in found})
    missing = sorted(k for k in found if k not in ours)
    return ([k for k in missing if k[1] in upstream.get(k[0], {})],
            [k for k in missing if k[1] not in upstream.get(k[0], {})])


def names(keys: Iterable[Key]) -> str:
    return ', '.join('[%s] %s' % key for key in keys)


def warn_unused(conf: cfg.ConfigOpts) -> None:
    """Log one warning naming every option of the configuration files
    that inspector-ha does not implement; never fails the start."""
    try:
        paths = files_of(conf)
        upstream, others = unused(conf, paths)
    except Exception as exc:  # noqa - a warning must not stop a start
        LOG.warning('Could not check the configuration files for options '
                    'inspector-ha does not implement: %s', exc)
        return
    message = _unused_message(upstream, others)
    if message:
        LOG.warning('%s (in %s)', message, ', '.join(paths))


def _unused_message(upstream: list[Key], others: list[Key]) -> str:
    parts = []
    if upstream:
        parts.append('ironic-inspector options that inspector-ha does not '
                     'implement, ignored: %s' % names(upstream))
    if others:
        parts.append('options unknown to inspector-ha and to '
                     'ironic-inspector 12.5, ignored: %s' % names(others))
    return '; '.join(parts)


class Findings:
    def __init__(self, path: str, upstream: list[Key], others: list[Key],
                 refused: list[Refusal]) -> None:
        self.path = path
        self.upstream = upstream
        self.others = others
        self.refused = refused

    def lines(self) -> list[str]:
        out = []
        message = _unused_message(self.upstream, self.others)
        if message:
            out.append('WARNING: ' + message)
        for (group, name), value, reason in self.refused:
            out.append('ERROR: [%s] %s = %s is refused: %s' % (
                group, name, value, reason))
        if not out:
            out.append('OK: inspector-ha implements every option set in '
                       '%s and accepts every value' % self.path)
        return out


def check_file(conf: cfg.ConfigOpts, path: str) -> Findings:
    """What inspector-ha would ignore or refuse in ``path``."""
    if not os.path.isfile(path):
        return Findings(path, [], [], [((DEFAULT, 'config_file'), path,
                                        'no such file')])
    fresh = _load(path)
    upstream, others = unused(fresh, [path])
    return Findings(path, upstream, others, refused(fresh, [path]))


def _load(path: str) -> cfg.ConfigOpts:
    from inspector_ha import conf as conf_mod
    fresh = cfg.ConfigOpts()
    conf_mod.register_opts(fresh)
    for group, opts in plugins.list_opts():  # every driver's, to check
        fresh.register_opts(opts, group=group)
    fresh([], project='inspector-ha', default_config_files=[path],
          default_config_dirs=[])
    return fresh


def refused(conf: cfg.ConfigOpts, paths: Iterable[str]) -> list[Refusal]:
    """``[((group, name), value, reason)]``: values set in ``paths`` that
    inspector-ha's registered options refuse (under their name or an old
    one, such as 12.5's ``[iptables] ip_version``), or plugins that are
    not installed."""
    moved = _moved()
    result = []
    for (group, name), value in sorted(set_in(paths).items()):
        where = moved.get((group, name), (group, name))
        try:
            owner = conf if where[0] == DEFAULT else conf[where[0]]
            getattr(owner, where[1])
            plugins.check(conf, *where)
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError, KeyError,
                AttributeError):
            continue
        except (cfg.ConfigFileValueError, ValueError) as exc:
            result.append(((group, name), value, str(exc)))
    return result


def _moved() -> dict[Key, Key]:
    """``{(old group, old name): (group, name)}`` of our options."""
    from inspector_ha.conf import opts as our_opts
    return {old: (group or DEFAULT, opt.dest)
            for group, opts in our_opts.list_opts() for opt in opts
            for old in _deprecated_names(group or DEFAULT, opt)}
