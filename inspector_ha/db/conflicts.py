"""What a conditional write raises when it lost.

Every write to a node or a request is conditional on what was read
(``UPDATE ... WHERE state AND generation``, ``WHERE status IN open``);
zero rows updated means another writer won, and the loser's write is not
applied. Both :mod:`inspector_ha.db.nodes` and
:mod:`inspector_ha.db.ledger` raise it.
"""


class StaleWrite(Exception):
    """The row changed since it was read: the write lost and was dropped."""
