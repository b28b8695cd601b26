"""Fixtures of the binding's tests. ctest sets PYTHONPATH to <build>/python
and names the artifacts they load through the environment."""

import os

import pytest


def _path(variable):
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"{variable} is not set (ctest sets it)")
    return value


@pytest.fixture(scope="session")
def fake_artifact():
    """A hand-written artifact: sum = a + b over float32 (2, 3)."""
    return _path("TCC_FAKE_ARTIFACT")


@pytest.fixture(scope="session")
def tcc_bin_dir():
    """The folder of the tcc compiler, for end-to-end tests."""
    return _path("TCC_BIN_DIR")
