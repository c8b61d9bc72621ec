"""lldp_basic: LLDP TLVs parsed into ``all_interfaces[*].lldp_processed``."""

from __future__ import annotations

import logging
from typing import Any

from inspector_ha.processing import base
from inspector_ha.processing import lldp

LOG = logging.getLogger(__name__)


class LLDPBasicHook(base.ProcessingHook):
    def before_update(self, data: dict[str, Any],
                      node: base.NodeContext) -> None:
        interfaces = data.get('all_interfaces') or {}
        for name, tlvs in lldp.raw_tlvs(data).items():
            if name not in interfaces:
                continue
            processed = lldp.parse(tlvs)
            if processed:
                interfaces[name]['lldp_processed'] = processed
