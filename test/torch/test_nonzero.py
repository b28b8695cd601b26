"""Results whose size only the run knows (aten.nonzero, argwhere,
nonzero(as_tuple=True)): tcc computes them at their upper bound with a
count, and the caller trims them (an exported artifact reports the count
itself). nonzero_static has a static size."""

import pytest
import torch

import tcc.torch


def _no_fallback(fn):
    return torch.compile(fn, backend="tcc", fullgraph=True, dynamic=False,
                         options={"fallback": False})


INPUTS = {
    "matrix": torch.tensor([[1.0, 0.0], [0.0, 3.0]]),
    "none set": torch.zeros(3, 4),
    "all set": torch.ones(2, 3, dtype=torch.int64),
    "scalar set": torch.tensor(2.0),
    "scalar zero": torch.tensor(0.0),
    "empty": torch.zeros(0, 3),
    # NaN is not zero, -0.0 is.
    "nan and -0": torch.tensor([float("nan"), 0.0, -0.0, 1.0]),
    "bool 3-d": torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(1)) > 0,
    "int": torch.randint(-2, 3, (5, 7), generator=torch.Generator().manual_seed(2)),
}


@pytest.mark.parametrize("name", list(INPUTS))
def test_nonzero_matches_eager(name):
    x = INPUTS[name]
    got = _no_fallback(lambda t: torch.nonzero(t))(x)
    want = torch.nonzero(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert torch.equal(got, want)


@pytest.mark.parametrize("name", ["matrix", "bool 3-d", "int", "empty"])
def test_as_tuple_and_argwhere(name):
    x = INPUTS[name]
    got = _no_fallback(lambda t: (torch.nonzero(t, as_tuple=True),
                                  torch.argwhere(t), t * 2))(x)
    want = (torch.nonzero(x, as_tuple=True), torch.argwhere(x), x * 2)
    for g, w in zip(got[0], want[0]):
        assert torch.equal(g, w)
    assert torch.equal(got[1], want[1]) and torch.equal(got[2], want[2])


@pytest.mark.parametrize("size,fill", [(0, 0), (2, -1), (3, 7), (40, -5)])
def test_nonzero_static(size, fill):
    for x in INPUTS.values():
        got = _no_fallback(lambda t: torch.nonzero_static(
            t, size=size, fill_value=fill))(x)
        assert torch.equal(got, torch.nonzero_static(x, size=size,
                                                     fill_value=fill))
        torch._dynamo.reset()


def test_a_consumer_of_nonzero_runs_in_eager_and_is_reported():
    def fn(x):
        return torch.nonzero(x).float().sum() + x.sum()
    before = len(tcc.torch.stats.fallbacks)
    compiled = torch.compile(fn, backend="tcc", dynamic=False)
    x = INPUTS["int"].float()
    # (Without it Dynamo runs nonzero itself, between two graphs.)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        torch.testing.assert_close(compiled(x), fn(x))
    reasons = [r for _, r in tcc.torch.stats.fallbacks[before:]]
    assert any("known only at run time" in r for r in reasons), reasons


def test_without_fallback_a_consumer_of_nonzero_is_an_error():
    compiled = _no_fallback(lambda x: torch.nonzero(x).sum())
    with pytest.raises(Exception) as e:
        compiled(INPUTS["matrix"])
    assert "known only at run time" in str(e.value)


def test_export_a_result_of_run_time_size(tmp_path):
    """torch.export of nonzero: the artifact computes the count and reports
    it (a computed symbol, abi.md); loaded, it returns the rows at that
    size, run after run, against torch for inputs of the example's shape."""
    import numpy as np
    import tcc

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x)

    so = str(tmp_path / "m.so")
    tcc.torch.export(M(), (torch.randn(3, 4),), so)
    model = tcc.load(so)
    assert model.outputs[0].shape[1] == 2
    assert isinstance(model.outputs[0].shape[0], str)
    gen = torch.Generator().manual_seed(3)
    for x in (torch.zeros(3, 4), torch.ones(3, 4),
              (torch.rand(3, 4, generator=gen) > 0.5).float()):
        got, = model(x.numpy())
        np.testing.assert_array_equal(got, M()(x).numpy())
