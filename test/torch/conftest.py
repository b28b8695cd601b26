"""Fixtures of the torch frontend's tests: the tcc package from the build
(ctest sets PYTHONPATH), artifacts cached in a folder of this session, and
Dynamo's caches cleared between tests."""

import os
import tempfile

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="session", autouse=True)
def cache_dir():
    with tempfile.TemporaryDirectory(prefix="tcc-torch-cache-") as d:
        os.environ["TCC_CACHE_DIR"] = d
        yield d


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


def tcc_compile(model, **options):
    """torch.compile by the backend's registered name, static shapes."""
    return torch.compile(model, backend="tcc", dynamic=False,
                         options=options or None)
