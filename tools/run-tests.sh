#!/usr/bin/env bash
# Install/start the test dependencies, then run pytest in .venv.
#   tools/run-tests.sh                    -> ruff check ., mypy, then pytest -p no:cacheprovider -q -x --durations=20 tests/ (but tests/site)
#   tools/run-tests.sh tests/unit -k foo  -> pytest -p no:cacheprovider tests/unit -k foo
# Exits with pytest's status, except "no tests collected" (5) becomes 1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

bash tools/install-test-deps.sh

if (($# == 0)); then
    echo "[run-tests] .venv/bin/ruff check ."
    .venv/bin/ruff check .
    echo "[run-tests] .venv/bin/mypy"
    .venv/bin/mypy
    # NOTE: the three-controller site (tests/site) is a long form of its
    # own: bash tools/run-tests.sh tests/site (about 4 minutes).
    set -- -q -x --durations=20 tests/ --ignore=tests/site
fi
echo "[run-tests] .venv/bin/python -m pytest -p no:cacheprovider $*"
status=0
.venv/bin/python -m pytest -p no:cacheprovider "$@" || status=$?
if ((status == 5)); then
    echo "[run-tests] ERROR: pytest collected no tests; treating that as a failure" >&2
    exit 1
fi
exit "$status"
