"""``example``: upstream's example processing hook and node-not-found
hook; they only log what they get (the latter finds no node, so its data
is refused as upstream's is)."""

from __future__ import annotations

import logging
from typing import Any

from inspector_ha.processing import base
from inspector_ha.processing import not_found

LOG = logging.getLogger(__name__)


class ExampleProcessingHook(base.ProcessingHook):
    def before_processing(self, data: dict[str, Any]) -> None:
        LOG.debug('before_processing: %s', data)

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        LOG.debug('before_update: %s (node %s)', data, node.uuid)


class ExampleNotFoundHook(not_found.NodeNotFoundHook):
    def __call__(self, data: dict[str, Any]) -> None:
        LOG.debug('Processing node not found %s', data)
        return None
