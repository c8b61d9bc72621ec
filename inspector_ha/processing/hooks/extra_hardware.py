"""extra_hardware: the ramdisk's eDeploy ``data`` list as nested ``extra``.

``[[a, b, c, d], ...]`` becomes ``extra[a][b][c] = d`` (``d`` made an
integer when it is one) and ``data`` is deleted. Upstream's docstring
says the data is stored in Swift; its code no longer does, nor does this.
"""

from __future__ import annotations

import logging
from typing import Any

from oslo_config import cfg

from inspector_ha.processing import base

LOG = logging.getLogger(__name__)

GROUP = 'extra_hardware'

OPTS = [
    cfg.BoolOpt('strict', default=False,
                help='Refuse to convert the extra hardware data when a '
                     'record is not a 4-item list, and drop the data '
                     'even when it cannot be converted.'),
]
ITEM_SIZE = 4


class ExtraHardwareHook(base.ProcessingHook):
    OPTIONS = [(GROUP, OPTS)]

    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        if 'data' not in data:
            LOG.warning('No extra hardware information was received from '
                        'the ramdisk')
            return
        strict = self.conf.extra_hardware.strict
        if not _is_edeploy(data['data'], strict):
            LOG.warning('Extra hardware data was not in a recognised format '
                        '(eDeploy), and will not be forwarded to '
                        'introspection rules')
            if strict:
                del data['data']
            return
        data['extra'] = convert(data.pop('data'))


def _is_edeploy(items: Any, strict: bool) -> bool:
    return isinstance(items, list) and all(
        isinstance(item, list) and (not strict or len(item) == ITEM_SIZE)
        for item in items)


def convert(items: list[list[Any]]) -> dict[Any, Any]:
    extra: dict[Any, Any] = {}
    for item in items:
        if len(item) < ITEM_SIZE:
            LOG.warning('Ignoring invalid extra data item %s', item)
            continue
        try:
            level = extra.setdefault(item[0], {}).setdefault(item[1], {})
            level[item[2]] = _int_or_same(item[3])
        except (TypeError, AttributeError):
            LOG.warning('Ignoring invalid extra data item %s', item)
    return extra


def _int_or_same(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value
