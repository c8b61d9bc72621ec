"""Prometheus metrics (prometheus-client), one home for every name.

Each process counts what it does and serves its own ``/metrics``: API
processes on their API port (:func:`wrap`, ``[metrics] enabled``),
workers on ``[metrics] port`` (:func:`serve`). Prometheus adds the
``instance`` label per scrape target, so the figures of a cluster are the
sums over its processes. Under a WSGI server that forks several
processes per port, set ``PROMETHEUS_MULTIPROC_DIR`` as prometheus-client
documents: ``/metrics`` then sums that server's processes.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import prometheus_client as prom
from prometheus_client import multiprocess

from inspector_ha.common import timeutils
from inspector_ha.fsm import states as st

if TYPE_CHECKING:
    import datetime
    from collections.abc import Iterable, Sequence
    from wsgiref.simple_server import WSGIServer

    from _typeshed.wsgi import (StartResponse, WSGIApplication,
                                WSGIEnvironment)
    from oslo_config import cfg
    from prometheus_client.metrics import MetricWrapperBase

    # NOTE: db imports common, so common does not import db's models.
    class Request(Protocol):
        """A request row (:class:`inspector_ha.db.models.Request`)."""
        event: str
        created_at: datetime.datetime

    class Node(Protocol):
        """A node row (:class:`inspector_ha.db.models.Node`)."""
        state: str
        started_at: datetime.datetime | None

#: A metric, and the type of its series.
_M = TypeVar('_M', bound='MetricWrapperBase')

PREFIX = 'inspector_ha_'
PATH = '/metrics'
#: Histogram buckets in seconds: sub-second calls to hour-long states.
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
           60, 120, 300, 600, 1800, 3600)


def _counter(name: str, doc: str, labels: Sequence[str] = ()) -> prom.Counter:
    return prom.Counter(PREFIX + name, doc, labels)


def _histogram(name: str, doc: str,
               labels: Sequence[str] = ()) -> prom.Histogram:
    return prom.Histogram(PREFIX + name, doc, labels, buckets=SECONDS)


def _gauge(name: str, doc: str, labels: Sequence[str] = ()) -> prom.Gauge:
    return prom.Gauge(PREFIX + name, doc, labels,
                      multiprocess_mode='livemax')


STARTED = _counter('introspections_started',
                   'Introspections accepted by the API (start, or a '
                   'discovered node enrolled).', ['kind'])
ENDED = _counter('introspections_ended',
                 'Introspections that reached a final state, by outcome.',
                 ['outcome'])
DURATION = _histogram('introspection_duration_seconds',
                      'Time from start to the final state, by outcome.',
                      ['outcome'])
STATE_SECONDS = _histogram('state_seconds',
                           'Time a node spent in a state, observed when '
                           'it leaves the state.', ['state'])
QUEUE_LAG = _histogram('request_queue_lag_seconds',
                       'Time from a request\'s creation to a worker '
                       'taking it, by event.', ['event'])
DELIVERIES = _counter('deliveries', 'Requests delivered to a worker.',
                      ['event'])
PUT_BACKS = _counter('put_backs', 'Deliveries put back on the queue to be '
                                  'tried again.')
DEAD_LETTERS = _counter('dead_letters', 'Requests closed as dead after '
                                        'max_deliveries failed deliveries.')
TRANSITIONS = _counter('transitions',
                       'State transitions tried, by event and result '
                       '(committed, or stale: lost to a newer write).',
                       ['event', 'result'])
IRONIC_CALLS = _counter('ironic_calls',
                        'Calls to Ironic by call and result (ok, error).',
                        ['call', 'result'])
IRONIC_SECONDS = _histogram('ironic_call_seconds',
                            'Latency of Ironic calls, retries included.',
                            ['call'])
API_REQUESTS = _counter('api_requests', 'API requests by route, method '
                                        'and status.',
                        ['route', 'method', 'status'])
API_SECONDS = _histogram('api_request_seconds', 'API request latency by '
                                                'route and method.',
                         ['route', 'method'])
LEADER_EPOCH = _gauge('leader_epoch', 'Epoch of this process\'s leadership '
                                      'of a periodic task (0: not leader).',
                      ['task'])
PERIODIC_RUNS = _counter('periodic_runs', 'Runs of a periodic task led by '
                                          'this process, by result.',
                         ['task', 'result'])
FENCED_WRITES = _counter('fenced_writes', 'Writes of a deposed leader '
                                          'refused by the epoch fence.',
                         ['task'])
WORKER_SLOTS = _gauge('worker_slots', 'Requests this worker process may '
                      'handle at once: its pool, or its share of [worker] '
                      'cluster_concurrency.')
IRONIC_CALLS_AT_ONCE = _gauge(
    'ironic_calls_at_once', 'Ironic calls this worker process\'s tasks '
    'may make at once: its pool, lowered while Ironic answers slowly '
    '([worker] pace_ironic), down to its share of least_ironic_calls.')
PXE_LIST_SIZE = _gauge('pxe_filter_list_size', 'Entries in the PXE '
                                               'filter\'s lists.', ['list'])
PXE_OPEN = _gauge('pxe_filter_open', '1 when this host serves DHCP to '
                                     'nodes (the firewall leader), else 0.')


def since(moment: datetime.datetime | None) -> float:
    """Seconds from ``moment`` (a naive UTC datetime) to now, >= 0."""
    if moment is None:
        return 0.0
    return max(0.0, (timeutils.utcnow() - moment).total_seconds())


#: Each metric's series by label values, as ``labels()`` gives them (it
#: checks and converts the values under a lock on every call: 5-7 us of
#: CPU, against under 1 here); no more than the metric keeps itself.
_SERIES: dict[tuple[MetricWrapperBase, tuple[object, ...]], Any] = {}


def series(metric: _M, *values: object) -> _M:
    """``metric.labels(*values)``, looked up once. Only for label values
    from a bounded set (events, states, routes, call names, results), as
    every label of these metrics is."""
    key = (metric, values)
    found = _SERIES.get(key)
    if found is None:
        found = _SERIES[key] = metric.labels(*values)
    return found


def delivered(request: Request, deliveries: int) -> None:
    """A worker took ``request`` (a request row) to handle it; the queue
    lag is that of its first delivery."""
    series(DELIVERIES, request.event).inc()
    if deliveries == 1:
        series(QUEUE_LAG, request.event).observe(since(request.created_at))


def committed(node: Node, to_state: str | None,
              stayed: float | None = None) -> None:
    """A transition of ``node`` (as it was before) to ``to_state``, after
    ``stayed`` seconds in its state (None: not known)."""
    if stayed is not None:
        series(STATE_SECONDS, node.state).observe(stayed)
    if to_state in st.FINAL_STATES:
        series(ENDED, to_state).inc()
        series(DURATION, to_state).observe(since(node.started_at))


def ran(task: str, result: str) -> None:
    """A run of periodic ``task`` led by this process ended."""
    series(PERIODIC_RUNS, task, result).inc()


def fenced(task: str) -> None:
    """A write of ``task``'s deposed leader was refused; it steps down."""
    series(FENCED_WRITES, task).inc()
    ran(task, 'fenced')


class Timer:
    """``with Timer(series(histogram, ...)):`` observes the block's time."""

    def __init__(self, histogram: prom.Histogram) -> None:
        self._histogram = histogram

    def __enter__(self) -> Timer:
        self._began = time.monotonic()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._histogram.observe(time.monotonic() - self._began)


def _registry() -> prom.CollectorRegistry:
    if os.environ.get('PROMETHEUS_MULTIPROC_DIR'):
        registry = prom.CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return prom.REGISTRY


def app() -> WSGIApplication:
    """The WSGI application answering ``/metrics``."""
    return prom.make_wsgi_app(_registry())


def wrap(wsgi_app: WSGIApplication, conf: cfg.ConfigOpts) -> WSGIApplication:
    """``wsgi_app`` answering :data:`PATH` itself (no authentication,
    like ``/healthcheck``) unless ``[metrics] enabled`` is false."""
    if not conf.metrics.enabled:
        return wsgi_app
    metrics_app = app()

    def dispatch(environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        if environ.get('PATH_INFO') == PATH:
            return metrics_app(environ, start_response)
        return wsgi_app(environ, start_response)
    return dispatch


def serve(conf: cfg.ConfigOpts) -> WSGIServer | None:
    """Serve ``/metrics`` on ``[metrics] port`` (a worker); None if 0."""
    if not conf.metrics.enabled or not conf.metrics.port:
        return None
    server, _thread = prom.start_http_server(
        conf.metrics.port, addr=conf.metrics.host or conf.listen_address,
        registry=_registry())
    return server
