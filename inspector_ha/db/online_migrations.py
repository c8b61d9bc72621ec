"""Online data migrations: data moved between old and new columns while
both releases run (``inspector-ha-dbsync online_data_migrations``).

An expand migration adds the new place; the new release writes both
places; an online migration moves what is left, in batches, while the
service runs; the contract migration that drops the old place runs only
once every online migration reports nothing left (``upgrade --contract``
refuses before that).

A migration is ``(name, count, migrate)``: ``count(conn)`` is the
number of rows still to move; ``migrate(conn, limit)`` moves at most
``limit`` of them and returns how many it moved. Each batch is one
transaction. This release has none yet; the next one adds them to
:data:`MIGRATIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import sqlalchemy as sa

    from inspector_ha.db import api


class Migration(NamedTuple):
    """An online data migration (see above)."""

    name: str
    count: Callable[[sa.Connection], int]
    migrate: Callable[[sa.Connection, int], int]


#: Every online data migration of this release, in the order they run.
MIGRATIONS: tuple[Migration, ...] = ()


def remaining(store: api.Store,
              migrations: Iterable[Migration] | None = None
              ) -> dict[str, int]:
    """``{name: rows still to move}`` of the unfinished migrations."""
    result = {}
    for mig in MIGRATIONS if migrations is None else migrations:
        left = store.transaction(mig.count)
        if left:
            result[mig.name] = left
    return result


def run(store: api.Store, max_count: int | None = None, batch: int = 50,
        migrations: Iterable[Migration] | None = None
        ) -> dict[str, tuple[int, int]]:
    """Run the migrations, ``batch`` rows per transaction, at most
    ``max_count`` rows in total (None: until done). Returns
    ``{name: (moved, left)}``."""
    budget = max_count
    summary: dict[str, tuple[int, int]] = {}
    for mig in MIGRATIONS if migrations is None else migrations:
        moved = 0
        while budget is None or budget > 0:
            limit = batch if budget is None else min(batch, budget)
            done = store.transaction(mig.migrate, limit)
            moved += done
            if budget is not None:
                budget -= done
            if done < limit:
                break
        summary[mig.name] = (moved, store.transaction(mig.count))
    return summary
