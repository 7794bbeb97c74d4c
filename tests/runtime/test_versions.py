"""Each package states its version as its installed distribution does (one source each:
codegen/version.py for structgen, structops/__init__.py for structops; pyproject.toml reads it)."""

from importlib.metadata import version

import structgen

import structops


def test_versions_are_the_distributions():
    assert structgen.__version__ == version("structgen")
    assert structops.__version__ == version("structops")
