"""What a test needs from the machine besides the backends: a tool or a
Python package that ``tools/install-test-deps.sh`` installs. Missing, the
test fails when ``CI=true`` (CI must never skip it) and skips otherwise."""

import importlib
import pathlib
import shutil
import sys

import pytest

import backends


def _missing(message):
    if backends.in_ci():
        pytest.fail('CI=true and %s' % message, pytrace=False)
    pytest.skip(message)


def tool(name, package):
    """The path of the executable ``name`` (Debian package ``package``)."""
    path = shutil.which(name)
    if path is None:
        _missing('%s is not installed (Debian package %s, %s)' % (
            name, package, backends.INSTALL_HINT))
    return path


def file(path, what):
    """``path``, which ``tools/install-test-deps.sh`` makes (``what``)."""
    if not path.exists():
        _missing('%s: no %s (%s)' % (what, path, backends.INSTALL_HINT))
    return path


def module(name):
    """The Python module ``name``, imported."""
    try:
        return importlib.import_module(name)
    except ImportError:
        _missing('Python package %s is not installed (%s)' % (
            name, backends.INSTALL_HINT))


def openstack_cli():
    """The ``openstack`` command of this venv (python-openstackclient)."""
    return file(pathlib.Path(sys.executable).parent / 'openstack',
                'python-openstackclient in this venv')
