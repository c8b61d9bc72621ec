"""``inspector-ha``: API, workers and periodic work in one process; with
no configuration file, the embedded default."""

from __future__ import annotations

import sys

from inspector_ha.cmd import api
from inspector_ha.cmd import common


def main(argv: list[str] | None = None) -> int:
    conf = common.load_config(sys.argv[1:] if argv is None else argv,
                              allow_embedded=True)
    return api.serve(conf, all_in_one=True)


if __name__ == '__main__':
    sys.exit(main())
