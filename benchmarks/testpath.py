"""Puts ``tests/functional`` on ``sys.path``: the benchmark reuses the
functional tests' helpers (``backends``, ``cluster``, ``ramdisk`` and the
batch helpers of the test modules) by importing them, as pytest does."""

import pathlib
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
FUNCTIONAL = str(REPO_ROOT / 'tests' / 'functional')

if FUNCTIONAL not in sys.path:
    sys.path.insert(0, FUNCTIONAL)
