"""What tcc does not compile runs in eager, reported; with fallback off it
is an error naming the ATen op and the node; bad input gets a clear
message, never a crash."""

import subprocess
import sys

import pytest
import torch

from conftest import tcc_compile
from models import MLP

import tcc
import tcc.torch


class WithAntialias(torch.nn.Module):
    """A model with an op tcc has no conversion for (antialiased bilinear
    resizing)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        k = torch.nn.functional.interpolate(
            y[None, None], size=(3, 4), mode="bilinear", antialias=True)
        return torch.relu(y) * k[0, 0].repeat(1, 2)


def test_unsupported_op_runs_in_eager_and_is_reported():
    model = WithAntialias().eval()
    x = torch.randn(3, 8)
    before = len(tcc.torch.stats.fallbacks)
    compiled = tcc_compile(model)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4,
                                   atol=1e-5)
    fell_back = tcc.torch.stats.fallbacks[before:]
    assert [op for op, _ in fell_back] == ["aten._upsample_bilinear2d_aa.default"]
    assert "no tcc conversion" in fell_back[0][1]
    # The rest was compiled: the linear layer and the scaling around it.
    assert tcc.torch.stats.compiled + tcc.torch.stats.cache_hits >= 2


def test_explain_lists_what_falls_back():
    reasons = tcc.torch.explain(WithAntialias().eval(), torch.randn(3, 8))
    assert reasons == [("aten._upsample_bilinear2d_aa.default",
                        "aten._upsample_bilinear2d_aa.default has no tcc conversion")]
    assert tcc.torch.explain(MLP().eval(), torch.randn(2, 32)) == []


def test_log_names_the_fallbacks(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(
        "import sys, torch\n"
        f"sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})\n"
        "from test_fallback import WithAntialias\n"
        "m = torch.compile(WithAntialias().eval(), backend='tcc', dynamic=False)\n"
        "with torch.no_grad():\n"
        "    m(torch.randn(3, 8))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True,
                         text=True, env={**__import__("os").environ,
                                         "TCC_LOG": "1"})
    assert out.returncode == 0, out.stderr
    assert ("tcc: aten._upsample_bilinear2d_aa.default (node '_upsample_bilinear2d_aa') runs in eager: "
            "aten._upsample_bilinear2d_aa.default has no tcc conversion") in out.stderr


def test_without_fallback_an_unsupported_op_is_an_error():
    compiled = tcc_compile(WithAntialias().eval(), fallback=False)
    with pytest.raises(Exception) as e, torch.no_grad():
        compiled(torch.randn(3, 8))
    assert "aten._upsample_bilinear2d_aa.default (node '_upsample_bilinear2d_aa')" in str(e.value)
    assert "no tcc conversion" in str(e.value)


class Complex(torch.nn.Module):
    def forward(self, x):
        return (x.to(torch.complex64) * 2).real


def test_unsupported_dtype_is_a_reason():
    compiled = tcc_compile(Complex(), fallback=False)
    with pytest.raises(Exception) as e, torch.no_grad():
        compiled(torch.randn(4))
    assert "complex64" in str(e.value)
    # With fallback it runs (in eager).
    with torch.no_grad():
        torch.testing.assert_close(tcc_compile(Complex())(torch.ones(4)),
                                   torch.full((4,), 2.0))


class ShapeToList(torch.nn.Module):
    def forward(self, x):
        return x.sum(0), x.shape[0]


def test_non_tensor_output():
    compiled = tcc_compile(ShapeToList())
    with torch.no_grad():
        total, n = compiled(torch.ones(3, 2))
    assert n == 3
    torch.testing.assert_close(total, torch.full((2,), 3.0))


def test_unknown_option():
    compiled = tcc_compile(MLP().eval(), tread=2)
    with pytest.raises(Exception) as e, torch.no_grad():
        compiled(torch.randn(2, 32))
    assert "unknown option 'tread'" in str(e.value)


def test_thread_pool_option():
    """thread_pool="torch" (the default; every other test runs on it) runs
    tcc's loops on PyTorch's OpenMP threads, "tcc" on the runtime's own
    pool: the same results; anything else is an error naming the choices."""
    x = torch.randn(4, 32)
    model = MLP().eval()
    with torch.no_grad():
        want = model(x)
        got = tcc_compile(model, thread_pool="tcc", threads=2)(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    compiled = tcc_compile(MLP().eval(), thread_pool="mine")
    with pytest.raises(Exception) as e, torch.no_grad():
        compiled(x)
    assert "thread_pool must be 'torch' or 'tcc'" in str(e.value)


def test_builder_errors_name_the_node():
    # A converter's op that the builder refuses: its error names the node.
    g = tcc.Graph("g")
    a = g.add_input("a", "float32", [2, 3])
    b = g.add_input("b", "float32", [4])
    g.set_location("aten.add.Tensor (node 'add')")
    with pytest.raises(tcc.CompileError) as e:
        g.op("tcc.add", [a, b])
    assert "shapes 2x3, 4 do not broadcast" in str(e.value)


def test_a_graph_that_only_returns_its_inputs_needs_no_compile():
    """x.contiguous() of a contiguous x: AOTAutograd's graph computes
    nothing, which is no reason to refuse it, even with fallback off."""
    compiled = tcc_compile(lambda x: x.contiguous(), fallback=False)
    x = torch.randn(3, 4)
    before = tcc.torch.stats.compiled
    assert torch.equal(compiled(x), x)
    assert tcc.torch.stats.compiled == before
