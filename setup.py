"""The one compiled part: fixtures/_tracking.c, the change capture (fixtures/tracking.py).

Optional: where it cannot be built (no C compiler), the package installs all the same and worlds track their
changes with SQL triggers instead, as fixtures/tracking.py explains (``fixtures.tracking.status()`` says which).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("fixtures._tracking", ["fixtures/_tracking.c"], optional=True, extra_compile_args=["-O2"])])
