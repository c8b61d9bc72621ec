"""The wheel carries the top-level ``migrations/`` as the package
``inspector_ha.migrations`` and the package data (everything else is
in setup.cfg)."""

import setuptools

MIGRATIONS = {'inspector_ha.migrations': 'migrations',
              'inspector_ha.migrations.versions': 'migrations/versions'}

setuptools.setup(
    packages=setuptools.find_packages(include=['inspector_ha*']) +
    sorted(MIGRATIONS),
    package_dir=MIGRATIONS,
    # NOTE: package_data here would replace setup.cfg's (every data
    # file, script.py.mako included, is listed there).
)
