"""Shared start-up: configuration, logging, signals, the HTTP server."""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from oslo_config import cfg
from oslo_log import log

from inspector_ha.api import server as server_mod
from inspector_ha import conf as conf_mod
from inspector_ha.cmd import embedded
from inspector_ha.common import memory
from inspector_ha.common import metrics
from inspector_ha.common import retry
from inspector_ha.common import systemd
from inspector_ha.conf import opts as opts_mod
from inspector_ha.conf import upstream

if TYPE_CHECKING:
    from types import FrameType

    from inspector_ha.api import health
    from inspector_ha import service as service_mod

LOG = logging.getLogger('inspector_ha')
CONFIG_ENV = 'INSPECTOR_HA_CONFIG_FILE'


def load_config(argv: list[str],
                allow_embedded: bool = False) -> cfg.ConfigOpts:
    """Parse the command line into ``cfg.CONF`` and return it.

    oslo.messaging registers some options only on the global object, so
    the global one is used; it is then passed explicitly everywhere.
    """
    conf = cfg.CONF
    conf_mod.register_opts(conf)
    register_log_opts(conf)
    files = _default_files(argv)
    try:
        conf(argv, project='inspector-ha',
             prog=os.path.basename(sys.argv[0]), default_config_files=files)
    except cfg.Error as exc:
        fail(str(exc))
    if allow_embedded and not conf.config_file:
        embedded.apply(conf)
    _check_values(conf)
    memory.limit_arenas(conf.malloc_arenas)
    log.setup(conf, 'inspector-ha')
    conf.register_mutate_hook(_log_level_changed)
    upstream.warn_unused(conf)
    return conf


def _check_values(conf: cfg.ConfigOpts) -> None:
    """Read every option once: a bad value is one line and exit 2 now,
    not a traceback later (oslo.config checks a value when it is read).
    So is a plugin that is not installed; the chosen plugins' own
    options are registered here, and read too."""
    try:
        groups = opts_mod.register_chosen(conf)
    except ValueError as exc:
        fail(str(exc))
    for group, opts in groups:
        section = conf if group is None else conf[group]
        for opt in opts:
            try:
                getattr(section, opt.dest)
            except (cfg.Error, ValueError) as exc:
                fail('[%s] %s: %s' % (group or 'DEFAULT', opt.dest, str(
                    exc).split('is not valid: ', 1)[-1]))


def fail(message: str) -> NoReturn:
    """One line on stderr, exit status 2, before anything started."""
    sys.stderr.write('%s: error: %s\n' % (
        os.path.basename(sys.argv[0]), ' '.join(message.split())))
    sys.exit(2)


def _default_files(argv: list[str]) -> list[str] | None:
    if os.environ.get(CONFIG_ENV):
        return [os.environ[CONFIG_ENV]]
    return None


#: Libraries that log too much at INFO, besides oslo.log's own list.
QUIET_LOGGERS = ['kazoo=WARN', 'tooz=WARN', 'openstack=WARN',
                 'alembic=WARN', 'stevedore=WARN']


def register_log_opts(conf: cfg.ConfigOpts) -> None:
    """oslo.log's options with inspector-ha's defaults: logs go to stderr
    (also with ``log_file``, unless ``use_stderr = false``); the node a
    worker's line is about is shown as ``[node <uuid>]``."""
    log.register_options(conf)
    log.set_defaults(default_log_levels=log.get_default_log_levels() +
                     QUIET_LOGGERS)
    conf.set_default('use_stderr', True)
    conf.set_default('instance_uuid_format', '[node %(uuid)s] ')


def _log_level_changed(conf: cfg.ConfigOpts, _changed: Any) -> None:
    """After SIGHUP (oslo.log applies ``debug`` itself), say the level."""
    LOG.info('Log level: %s', 'DEBUG' if conf.debug else 'INFO')


def on_signals(stop_callback: Callable[[], object],
               conf: cfg.ConfigOpts | None = None) -> None:
    """SIGTERM/SIGINT stop gracefully; SIGHUP re-reads the mutable
    options of ``conf`` (``systemctl reload``); SIGUSR1 dumps every
    thread's stack to stderr (the log) for an operator looking at a stuck
    process."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    def _handler(signum: int, _frame: FrameType | None) -> None:
        LOG.info('Signal %d received, stopping', signum)
        systemd.notify('STOPPING=1')
        threading.Thread(target=stop_callback, daemon=True).start()
    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)
    if conf is not None:
        signal.signal(signal.SIGHUP, lambda _s, _f: threading.Thread(
            target=_reload, args=(conf,), daemon=True).start())


def _reload(conf: cfg.ConfigOpts) -> None:
    try:
        conf.mutate_config_files()
        LOG.info('SIGHUP: configuration files re-read')
    except Exception as exc:  # a bad file must not stop the process
        LOG.error('SIGHUP: configuration not re-read: %s', exc)


def listen(conf: cfg.ConfigOpts,
           router: health.Router) -> server_mod.Listener:
    """Bind the API listener for ``router`` (routes are added once the
    service is built), or exit 2 with one line: before anything starts."""
    try:
        return server_mod.api_listener(conf, router)
    except server_mod.StartError as exc:
        fail(str(exc))


def health_listener(conf: cfg.ConfigOpts, router: health.Router
                    ) -> server_mod.Listener | None:
    """Bind the worker's ``[worker] health_port`` listener, or None."""
    if not conf.worker.health_port:
        return None
    try:
        return server_mod.listen(router, conf.worker.health_address,
                                 conf.worker.health_port, threads=4)
    except server_mod.StartError as exc:
        fail(str(exc))


def ready(listener: server_mod.Listener | None = None,
          what: str = 'API') -> None:
    """Started: serve, print the listener's address, tell systemd."""
    memory.freeze_started()
    if listener is not None:
        listener.start()
        print('inspector-ha %s listening on %s' % (what, listener.url),
              flush=True)
    systemd.notify('READY=1')


def serve_metrics(conf: cfg.ConfigOpts) -> bool:
    """Serve a worker's ``/metrics`` on ``[metrics] port`` (if set);
    False, with one line logged, if that port cannot be used."""
    try:
        metrics.serve(conf)
        return True
    except OSError as exc:
        LOG.error('Cannot serve metrics on port %s ([metrics] port): %s',
                  conf.metrics.port, exc)
        return False


def start(service: service_mod.Service, **kwargs: Any
          ) -> BaseException | None:
    """Start the service; what kept it from starting (a backend gone, or
    a stop meanwhile: ``retry.Interrupted``), after cleaning up, or
    None."""
    try:
        service.start(**kwargs)
        return None
    except retry.UNAVAILABLE_OR_STOPPING as exc:
        LOG.error('Could not start: %s', exc)
        service.shutdown()
        return exc
