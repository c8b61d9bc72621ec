"""Sphinx configuration of inspector-ha's documentation.

Built as OpenStack projects build theirs (``python -m sphinx -W -b html
doc/source doc/build/html``), offline: no intersphinx, default theme.
"""

from __future__ import annotations

import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / '_ext'))

# show-options reads its :config-file: relative to the working directory
# (OpenStack's jobs build from the repository's root): build from
# anywhere. Sphinx has made its source and output paths absolute by now.
os.chdir(HERE.parents[1])

project = 'inspector-ha'
copyright = 'inspector-ha authors'
extensions = [
    'myst_parser',
    'oslo_config.sphinxext',
    'openapi_reference',
]
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
html_theme = 'alabaster'

# The Markdown texts included from the repository (README.md, doc/*.md)
# link to repository files (etc/systemd/, doc/guarantees.md, ...), which
# are no pages here, so MyST warns that it cannot resolve them. Those
# texts have one home, where the links are right; only this warning type
# is silenced. The prose written for this site links by :doc: in
# reStructuredText or by URL, and every other warning (a :doc: to no
# page, an include marker not found, a toctree entry missing) still
# fails -W.
suppress_warnings = ['myst.xref_missing']
# Such a link is also offered to every domain, and oslo.config's raises
# KeyError on a target that is none of its options.
myst_ref_domains = ['std']
