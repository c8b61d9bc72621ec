"""Fixtures of the three-controller site (:mod:`three_controllers`):
one site per session, shared by its tests (each gets its own database,
queue topic and Ironic nodes); the fault suite's helpers
(``tests/fault``) and the functional fixture ``ironic`` are reused."""

import pathlib
import sys

import pytest

_TESTS = pathlib.Path(__file__).resolve().parents[1]
for _helpers in (_TESTS / 'fault', pathlib.Path(__file__).parent):
    if str(_helpers) not in sys.path:
        sys.path.insert(0, str(_helpers))

import harness as harness_mod  # noqa: E402
import site_harness  # noqa: E402
import suite_fixtures  # noqa: E402
import three_controllers  # noqa: E402


ironic = suite_fixtures.functional_conftest().ironic


@pytest.fixture(scope='session')
def site(obtain_backend):
    the_site = three_controllers.Site()
    try:
        yield obtain_backend(the_site.start)
    finally:
        the_site.close()


@pytest.fixture
def make_site_harness(tmp_path, ironic, site):
    """``make_site_harness(**kwargs)``: a started
    :class:`site_harness.SiteHarness`, stopped at the end of the test if
    the test did not stop it."""
    made = []

    def make(**kwargs):
        made.append(site_harness.SiteHarness(tmp_path, ironic, site,
                                             **kwargs))
        return made[-1].start()
    yield make
    harness_mod.stop_left_running(made)
