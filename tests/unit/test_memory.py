"""Memory settings made at a service process's start."""

import gc

from inspector_ha.common import memory


def test_malloc_arenas_are_capped_on_glibc_unless_zero_or_the_env_says(
        monkeypatch):
    monkeypatch.delenv('MALLOC_ARENA_MAX', raising=False)
    assert memory.limit_arenas(0) is False
    assert memory.limit_arenas(2) is True
    monkeypatch.setenv('MALLOC_ARENA_MAX', '4')
    assert memory.limit_arenas(2) is False


def test_objects_alive_once_started_are_left_out_of_later_collections():
    try:
        memory.freeze_started()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
