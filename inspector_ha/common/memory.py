"""Memory settings of a service process, made at start.

Measured with the benchmark's embedded process at 1,000 nodes (200
concurrent): glibc's malloc arenas capped at 2 lowered its peak RSS
from 160 to 150 MB; without a cap each thread that meets contention
(cheroot's 32, the worker pool) gets an arena of its own, up to 8 per
core, each keeping the 20 KB ramdisk payloads freed in it. And the
170,000 objects made at start (modules, options, tables) cost every full
collection of the garbage collector 40-70 ms to traverse, for nothing:
they live as long as the process.
"""

import ctypes
import gc
import logging
import os

LOG = logging.getLogger(__name__)
#: glibc's ``mallopt`` parameter for the most arenas (malloc.h).
M_ARENA_MAX = -8


def limit_arenas(count: int) -> bool:
    """Cap glibc's malloc arenas at ``count`` (call before threads
    start); nothing for 0, where ``MALLOC_ARENA_MAX`` is set (glibc read
    it) or where the C library is not glibc. Whether it was capped."""
    if not count or os.environ.get('MALLOC_ARENA_MAX'):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_ARENA_MAX, count))


def freeze_startup_objects() -> None:
    """Collect once, then keep every object that exists now out of later
    collections (``gc.freeze``): call once the service has started."""
    gc.collect()
    gc.freeze()
    LOG.debug('%d objects made at start frozen out of garbage '
              'collection', gc.get_freeze_count())
