"""The documentation builds with warnings as errors, and its
configuration reference lists every option of the shipped sample."""

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = ROOT / 'etc' / 'inspector-ha' / 'inspector-ha.conf.sample'
#: An option line of the sample, set (``name = value``) or commented out
#: (``#name = value``); its help lines start with ``# ``.
_OPTION = re.compile(r'#?([A-Za-z0-9_-]+) =(?: |$)')
_SECTION = re.compile(r'\[([^]]+)\]$')


@pytest.fixture(scope='module')
def build(tmp_path_factory):
    """One HTML build for the module (about 5 s): the process, and the
    output directory."""
    out = tmp_path_factory.mktemp('html')
    proc = subprocess.run(
        [sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q',
         '-b', 'html', ROOT / 'doc' / 'source', out],
        capture_output=True, text=True, timeout=300, check=False)
    return proc, out


def _sample_options():
    """``group.name`` of every option of the sample, as oslo.config's
    Sphinx extension makes its anchors (group lower-cased but DEFAULT)."""
    group, found = None, []
    for line in SAMPLE.read_text().splitlines():
        section = _SECTION.match(line)
        if section:
            group = section.group(1)
            group = group if group == 'DEFAULT' else group.lower()
            continue
        option = _OPTION.match(line)
        if option and group:
            found.append('%s.%s' % (group, option.group(1).lower()))
    return found


def test_the_docs_build_with_warnings_as_errors(build):
    proc, _ = build
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_the_configuration_reference_lists_every_option_of_the_sample(
        build):
    proc, out = build
    assert proc.returncode == 0, proc.stderr[-4000:]
    page = (out / 'configure.html').read_text()
    anchors = set(re.findall(r'\sid="([^"]+)"', page))
    options = _sample_options()
    assert len(options) > 200, 'the sample parsed to too few options'
    missing = [o for o in options if o not in anchors]
    assert not missing, 'not in configure.html: %s' % ', '.join(missing)
