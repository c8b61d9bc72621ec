"""Memory settings made at a service process's start."""

from inspector_ha.common import memory


def test_malloc_arenas_are_capped_on_glibc_unless_zero_or_the_env_says(
        monkeypatch):
    monkeypatch.delenv('MALLOC_ARENA_MAX', raising=False)
    assert memory.limit_arenas(0) is False
    assert memory.limit_arenas(2) is True
    monkeypatch.setenv('MALLOC_ARENA_MAX', '4')
    assert memory.limit_arenas(2) is False
