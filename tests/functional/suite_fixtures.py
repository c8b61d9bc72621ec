"""The functional suite's fixtures, for the conftest files of other test
directories: pytest imports each conftest.py as a module of its own, so
they cannot import it by name.

    ironic = suite_fixtures.functional_conftest().ironic
"""

import importlib.util
import pathlib

_CONFTEST = pathlib.Path(__file__).resolve().parent / 'conftest.py'


def functional_conftest():
    """``tests/functional/conftest.py``, loaded as a module of its own
    (its fixtures are defined anew by each load)."""
    spec = importlib.util.spec_from_file_location('functional_conftest',
                                                  _CONFTEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
