"""Shared start-up: configuration, logging, signals, the HTTP server."""

import faulthandler
import logging
import os
import signal
import sys
import threading

from oslo_config import cfg
from werkzeug import serving

from inspector_ha import conf as conf_mod
from inspector_ha.cmd import embedded
from inspector_ha.common import retry

LOG = logging.getLogger('inspector_ha')
CONFIG_ENV = 'INSPECTOR_HA_CONFIG_FILE'


def load_config(argv, allow_embedded=False):
    """Parse the command line into ``cfg.CONF`` and return it.

    oslo.messaging registers some options only on the global object, so
    the global one is used; it is then passed explicitly everywhere.
    """
    conf = cfg.CONF
    conf_mod.register_opts(conf)
    files = _default_files(argv)
    conf(argv, project='inspector-ha', prog=os.path.basename(sys.argv[0]),
         default_config_files=files)
    if allow_embedded and not conf.config_file:
        embedded.apply(conf)
    _logging(conf)
    return conf


def _default_files(argv):
    if os.environ.get(CONFIG_ENV):
        return [os.environ[CONFIG_ENV]]
    return None


def _logging(conf):
    level = logging.DEBUG if conf.debug else logging.INFO
    logging.basicConfig(level=level, stream=sys.stderr,
                        format='%(asctime)s %(process)d %(levelname)s '
                               '%(name)s: %(message)s')


def on_signals(stop_callback):
    """SIGTERM/SIGINT stop gracefully; SIGUSR1 dumps every thread's stack
    to stderr (the log) for an operator looking at a stuck process."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    def _handler(signum, _frame):
        LOG.info('Signal %d received, stopping', signum)
        threading.Thread(target=stop_callback, daemon=True).start()
    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)


class HTTPServer(serving.ThreadedWSGIServer):
    """werkzeug's threaded server with a listen backlog fit for bursts."""

    request_queue_size = 1024
    daemon_threads = True


def serve(conf, app):
    server = HTTPServer(conf.listen_address, conf.listen_port, app)
    thread = threading.Thread(target=server.serve_forever, daemon=True,
                              name='http')
    thread.start()
    host, port = server.server_address[:2]
    print('inspector-ha API listening on http://%s:%d/' % (
        '[%s]' % host if ':' in host else host, port), flush=True)
    return server


def start(service, **kwargs):
    """Start the service; False (after cleaning up) if a backend is gone."""
    try:
        service.start(**kwargs)
        return True
    except (retry.BackendUnavailable, retry.Interrupted) as exc:
        LOG.error('Could not start: %s', exc)
        service.shutdown()
        return False
