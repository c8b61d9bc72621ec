"""Fixtures for real backends, shared by all test directories.

Each fixture hands out a fresh, private resource (database, Redis namespace,
RabbitMQ vhost) and removes it afterwards.  When the backend is unreachable
the test is skipped, except with ``CI=true``, where it fails: CI must never
pass by skipping.  The helpers live in ``tests/functional/backends.py``.
"""

import pathlib
import sys

import pytest
from futurist import _thread as futurist_thread

_FUNCTIONAL = str(pathlib.Path(__file__).resolve().parent / 'functional')
if _FUNCTIONAL not in sys.path:
    sys.path.insert(0, _FUNCTIONAL)

import backends  # noqa: E402


def obtain(factory, *args, **kwargs):
    """Call a backends helper; skip or fail (in CI) if it is unavailable."""
    try:
        return factory(*args, **kwargs)
    except backends.BackendUnavailable as exc:
        if backends.in_ci():
            pytest.fail(f'CI=true and a backend is unavailable: {exc}',
                        pytrace=False)
        pytest.skip(str(exc))


#: How long an idle futurist worker waits for work before it looks whether
#: its pool is shutting down (futurist's own value is 1 s).
IDLE_WORKER_WAIT = 0.05


@pytest.fixture(scope='session', autouse=True)
def quick_stop_of_in_process_coordinators():
    """tooz's file, Redis and etcd drivers run their calls on a futurist
    thread pool, and stopping a coordinator joins that pool's idle worker,
    which sees the shutdown only when its wait for work times out: 1 s per
    ``Service.shutdown``, about 5 minutes over the unit tests' services.
    The shipped code keeps futurist's value; only this wait is shortened,
    in the pytest process only (the services the functional tests spawn
    keep 1 s)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(futurist_thread.ThreadWorker, 'MAX_IDLE_FOR',
                      IDLE_WORKER_WAIT)
        yield


@pytest.fixture(scope='session')
def obtain_backend():
    """``obtain`` for fixtures in other conftest files (which cannot import
    this module: pytest imports every conftest.py as ``conftest``)."""
    return obtain


@pytest.fixture
def pg_url():
    """SQLAlchemy URL of a fresh PostgreSQL database, dropped afterwards."""
    url = obtain(backends.postgres_url)
    yield url
    backends.drop_database(url)


@pytest.fixture
def mariadb_url():
    """SQLAlchemy URL of a fresh MariaDB database, dropped afterwards."""
    url = obtain(backends.mariadb_url)
    yield url
    backends.drop_database(url)


@pytest.fixture
def redis_url():
    """tooz URL of Redis with a private namespace, flushed afterwards."""
    url = obtain(backends.redis_url)
    yield url
    backends.flush_redis_namespace(url)


@pytest.fixture
def rabbit_url():
    """oslo.messaging transport URL of a fresh vhost, deleted afterwards."""
    url = obtain(backends.rabbit_url)
    yield url
    backends.delete_vhost(url)
