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


def test_objects_made_before_the_start_are_frozen_out_of_collections():
    made = [object() for _ in range(10)] + [[] for _ in range(10)]
    try:
        memory.freeze_startup_objects()
        collected = {id(o) for generation in range(3)
                     for o in gc.get_objects(generation)}
        assert gc.get_freeze_count() > 0
        assert not {id(o) for o in made[10:]} & collected
    finally:
        gc.unfreeze()
