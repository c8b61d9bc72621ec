#!/usr/bin/env bash
# Quick start: install inspector-ha into .venv (once) and run the
# all-in-one service on the embedded default: SQLite, tooz file://,
# in-process messaging, no configuration file. Extra arguments go to
# `inspector-ha`. Ironic is expected at $INSPECTOR_HA_IRONIC_URL
# (default http://127.0.0.1:6385, no auth).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    apt-get update -q && apt-get install -y -q python3-venv
fi
stamp=.venv/.inspector-ha-embedded-installed
want=$(cat setup.cfg pyproject.toml | sha256sum | cut -d' ' -f1)
if [[ ! -x .venv/bin/inspector-ha || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    echo "[start-embedded] installing inspector-ha into .venv"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -e '.[backends]'
    echo "$want" > "$stamp"
fi
exec .venv/bin/inspector-ha "$@"
