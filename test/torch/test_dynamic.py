"""Dynamic dimensions from PyTorch: torch.export's Dim and torch.compile's
dynamic dimensions become the artifact's symbol (one compile, any batch or
sequence length in the bounds), and dynamic dimensions tcc does not
compile are refused with the reason (or, in torch.compile, left to
eager)."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.export import Dim

from models import CNN, GPT, MLP, Encoder

import tcc
import tcc.torch


torchvision = pytest.importorskip("torchvision")

# The artifact computes in float32 as eager does, through other kernels
# (Winograd, packed GEMMs): the same tolerances as the static tests.
RTOL, ATOL = 1e-4, 1e-5


def _check_shapes(model, artifact, shapes, dtype=torch.float32):
    """The artifact against the model on random inputs of each shape."""
    for shape in shapes:
        x = torch.randn(*shape) if dtype.is_floating_point else \
            torch.randint(0, 97, shape)
        with torch.no_grad():
            want = model(x)
        got, = artifact(x.numpy())
        np.testing.assert_allclose(got, want.numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=f"input shape {shape}")


def _check(model, artifact, batches, shape, dtype=torch.float32):
    _check_shapes(model, artifact, [(n, *shape) for n in batches], dtype)


def test_export_resnet18_with_a_dynamic_batch(tmp_path):
    model = torchvision.models.resnet18(weights=None).eval()
    so = str(tmp_path / "resnet18.so")
    tcc.torch.export(model, (torch.randn(2, 3, 64, 64),), so,
                     dynamic_shapes={"x": {0: Dim("batch", max=64)}})
    m = tcc.load(so)
    assert m.inputs[0].shape == ("batch", 3, 64, 64)
    assert m.outputs[0].shape == ("batch", 1000)
    _check(model, m, [1, 3, 8], (3, 64, 64))


def test_export_encoder_with_a_dynamic_batch(tmp_path):
    """[B, S, D] -> [B*S, D] views (the symbol times the sequence length)
    stay within a batch row."""
    model = Encoder().eval()
    so = str(tmp_path / "encoder.so")
    tcc.torch.export(model, (torch.randn(4, 16, 64),), so,
                     dynamic_shapes=({0: Dim("n", min=1, max=32)},))
    m = tcc.load(so)
    assert m.inputs[0].shape == ("n", 16, 64)
    _check(model, m, [1, 3, 8, 32], (16, 64))


def test_the_bounds_are_the_dims(tmp_path):
    so = str(tmp_path / "mlp.so")
    tcc.torch.export(MLP().eval(), (torch.randn(4, 32),), so,
                     dynamic_shapes={"x": {0: Dim("rows", min=3, max=9)}})
    m = tcc.load(so)
    m(np.zeros((9, 32), np.float32))
    for n in (2, 10):
        with pytest.raises(ValueError) as e:
            m(np.zeros((n, 32), np.float32))
        assert "rows" in str(e.value)


def test_dynamic_artifact_under_tcc_run(tmp_path):
    """The artifact needs no Python: tcc-run binds the batch from the
    inputs it is given."""
    model = CNN().eval()
    so = str(tmp_path / "cnn.so")
    tcc.torch.export(model, (torch.randn(2, 3, 16, 16),), so,
                     dynamic_shapes={"x": {0: Dim("batch")}})
    x = torch.randn(5, 3, 16, 16)
    with torch.no_grad():
        y = model(x)
    folder = tmp_path / "set"
    folder.mkdir()
    np.save(folder / "input_0.npy", x.numpy())
    np.save(folder / "output_0.npy", y.numpy())
    out = subprocess.run(
        [os.path.join(os.environ["TCC_BIN_DIR"], "tcc-run"), so, "--inputs",
         str(folder), "--check", "--rtol", "1e-4", "--atol", "1e-5"],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_export_with_a_dynamic_sequence(tmp_path):
    """A Dim on the sequence (which attention and the mean over tokens mix)
    compiles once as padded buckets and matches eager at every length in
    its bounds."""
    torch.manual_seed(0)
    model = Encoder().eval()
    so = str(tmp_path / "e.so")
    tcc.torch.export(model, (torch.randn(2, 16, 64),), so,
                     dynamic_shapes={"x": {1: Dim("seq", max=96)}})
    artifact = tcc.load(so)
    assert artifact.inputs[0].shape == (2, "seq", 64)
    _check_shapes(model, artifact, [(2, s, 64) for s in (1, 5, 16, 33, 96)])


def test_export_refuses_an_unbounded_sequence(tmp_path):
    """Padding needs an upper bound: the compiler's error says to give one."""
    with pytest.raises(tcc.CompileError) as e:
        tcc.torch.export(Encoder().eval(), (torch.randn(2, 16, 64),),
                         str(tmp_path / "e.so"),
                         dynamic_shapes={"x": {1: Dim("seq")}})
    assert "is padded to fixed buckets and needs an upper bound" \
        in str(e.value)
    assert not os.path.exists(tmp_path / "e.so")


def test_export_refuses_two_batches(tmp_path):
    class Two(torch.nn.Module):
        def forward(self, a, b):
            return a.sum(1), b.sum(1)

    with pytest.raises(tcc.CompileError) as e:
        tcc.torch.export(Two(), (torch.randn(2, 3), torch.randn(3, 3)),
                         str(tmp_path / "t.so"),
                         dynamic_shapes={"a": {0: Dim("m")},
                                         "b": {0: Dim("n")}})
    assert "tcc compiles one dynamic dimension, shared by every batched " \
        "input" in str(e.value)
    assert not os.path.exists(tmp_path / "t.so")


def test_export_with_a_dynamic_batch_and_sequence(tmp_path):
    torch.manual_seed(0)
    model = Encoder().eval()
    so = str(tmp_path / "e.so")
    tcc.torch.export(model, (torch.randn(2, 16, 64),), so,
                     dynamic_shapes={"x": {0: Dim("batch", max=8),
                                           1: Dim("seq", max=32)}})
    artifact = tcc.load(so)
    assert artifact.inputs[0].shape == ("batch", "seq", 64)
    _check_shapes(model, artifact, [(1, 1, 64), (3, 20, 64), (8, 32, 64)])


def test_export_gpt_with_a_dynamic_sequence(tmp_path):
    """torch.arange(ids.shape[1]) (the positions) and ones(s, s).tril()
    (the causal mask) over a dynamic sequence: positions of the run's
    length (tcc.iota), fixed by each bucket."""
    torch.manual_seed(0)
    model = GPT().eval()
    so = str(tmp_path / "g.so")
    tcc.torch.export(model, (torch.randint(0, 97, (2, 16)),), so,
                     dynamic_shapes={"ids": {0: Dim("batch", max=8),
                                             1: Dim("seq", max=16)}})
    artifact = tcc.load(so)
    assert artifact.inputs[0].shape == ("batch", "seq")
    _check_shapes(model, artifact, [(1, 1), (3, 9), (8, 16)],
                  dtype=torch.int64)


def test_export_buffer_mask_with_a_dynamic_sequence(tmp_path):
    """nanoGPT's attention: arange(T) positions and a [1, 1, 32, 32] mask
    buffer cut to bias[:, :, :T, :T] over a dynamic T."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "models"))
    import make_models
    model = make_models._build_buffer_mask_attention().eval()
    so = str(tmp_path / "n.so")
    tcc.torch.export(model, (torch.randn(2, 16, 64),), so,
                     dynamic_shapes={"x": {1: Dim("seq", max=31)}})
    # (31: torch.export guards T != 32, the buffer's full size, which its
    # slicing treats apart.)
    artifact = tcc.load(so)
    assert artifact.inputs[0].shape == (2, "seq", 64)
    _check_shapes(model, artifact, [(2, s, 64) for s in (1, 7, 31)])


def test_export_refuses_a_range_of_another_length(tmp_path):
    """arange(2 * s) has 2s elements, a size no input names."""

    class Shifted(torch.nn.Module):
        def forward(self, x):
            return x + torch.arange(2 * x.shape[1]).view(2, -1)

    with pytest.raises(tcc.torch.Unsupported) as e:
        tcc.torch.export(Shifted(), (torch.randn(2, 8),),
                         str(tmp_path / "s.so"),
                         dynamic_shapes={"x": {1: Dim("seq", max=16)}})
    assert "aten.arange.start_step (node 'arange'): a range of 2*s" in \
        str(e.value)
    assert not os.path.exists(tmp_path / "s.so")


def test_export_refuses_a_buffer_cut_from_an_offset(tmp_path):
    """A fixed buffer cut to the sequence from an offset (b[1:s+1]) has no
    bucket's prefix to take: refused, naming the slice."""

    class Cut(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.randn(64))

        def forward(self, x):
            return x * self.b[1:x.shape[0] + 1]

    with pytest.raises(tcc.torch.Unsupported) as e:
        tcc.torch.export(Cut(), (torch.randn(8),), str(tmp_path / "c.so"),
                         dynamic_shapes={"x": {0: Dim("seq", max=32)}})
    assert "aten.slice.Tensor (node 'slice_1'): a slice of " in str(e.value)
    assert "elements of a fixed dimension of 64 (tcc takes the first " \
        "elements of a dynamic dimension's size, from 0 in steps of 1)" in \
        str(e.value)
    assert not os.path.exists(tmp_path / "c.so")


def test_export_refuses_mixing_the_batch(tmp_path):
    """A program whose rows depend on each other cannot run as slabs: the
    compiler's error names the op."""

    class Center(torch.nn.Module):
        def forward(self, x):
            return x - x.mean(0)

    with pytest.raises(tcc.CompileError) as e:
        tcc.torch.export(Center(), (torch.randn(4, 3),),
                         str(tmp_path / "c.so"),
                         dynamic_shapes={"x": {0: Dim("batch")}})
    assert "dynamic dimension" in str(e.value)
    assert not os.path.exists(tmp_path / "c.so")


def _compiled(model, dynamic, **options):
    return torch.compile(model, backend="tcc", dynamic=dynamic,
                         options=options or None)


def test_compile_dynamic_compiles_once():
    """dynamic=True makes every size symbolic: the batch stays so, the
    image's height and width are fixed at the first call's (a guard)."""
    model = CNN().eval()
    compiled = _compiled(model, True)
    tcc.torch.stats.reset()
    with torch.no_grad():
        for n in (4, 5, 8, 2):
            x = torch.randn(n, 3, 16, 16)
            torch.testing.assert_close(compiled(x), model(x), rtol=RTOL,
                                       atol=ATOL)
    assert tcc.torch.stats.graphs == 1
    assert tcc.torch.stats.fallbacks == []
    # Another image size is another graph (fixed sizes, as torch guards).
    with torch.no_grad():
        x = torch.randn(3, 3, 17, 17)  # (the same flattened size)
        torch.testing.assert_close(compiled(x), model(x), rtol=RTOL,
                                   atol=ATOL)
    assert tcc.torch.stats.graphs == 2
    assert tcc.torch.stats.fallbacks == []


def test_compile_automatic_dynamic_batch():
    """torch.compile's default: the second size recompiles with the batch
    dynamic, and every later size runs that graph."""
    model = Encoder().eval()
    compiled = _compiled(model, None)
    tcc.torch.stats.reset()
    with torch.no_grad():
        for n in (4, 6, 9, 13):
            x = torch.randn(n, 16, 64)
            torch.testing.assert_close(compiled(x), model(x), rtol=RTOL,
                                       atol=ATOL)
    assert tcc.torch.stats.graphs == 2  # static 4, then dynamic
    assert tcc.torch.stats.fallbacks == []


def test_compile_dynamic_embedding_ids():
    model = GPT().eval()
    compiled = _compiled(model, None)
    tcc.torch.stats.reset()
    with torch.no_grad():
        for n in (2, 3, 5):
            ids = torch.randint(0, 97, (n, 16))
            torch.testing.assert_close(compiled(ids), model(ids), rtol=RTOL,
                                       atol=ATOL)
    assert tcc.torch.stats.graphs == 2
    assert tcc.torch.stats.fallbacks == []


def test_compile_dynamic_sequence():
    """A sequence marked dynamic with a bound compiles once (padded
    buckets); without one, padding has no upper size: the graph runs in
    eager, with the reason recorded, and fallback=False makes it an
    error."""
    model = Encoder().eval()
    tcc.torch.stats.reset()
    with torch.no_grad():
        for s in (16, 9, 40):
            x = torch.randn(2, s, 64)
            torch._dynamo.mark_dynamic(x, 1, max=64)
            torch.testing.assert_close(_compiled(model, None)(x), model(x),
                                       rtol=RTOL, atol=ATOL)
    assert tcc.torch.stats.graphs == 1
    assert tcc.torch.stats.fallbacks == []
    torch._dynamo.reset()
    tcc.torch.stats.reset()
    x = torch.randn(2, 16, 64)
    torch._dynamo.mark_dynamic(x, 1)
    with torch.no_grad():
        torch.testing.assert_close(_compiled(model, None)(x), model(x))
    assert any("needs an upper bound" in reason
               for _, reason in tcc.torch.stats.fallbacks)
    torch._dynamo.reset()
    with pytest.raises(Exception) as e, torch.no_grad():
        _compiled(model, None, fallback=False)(x)
    assert "needs an upper bound" in str(e.value)


def test_compile_gpt_dynamic_sequence():
    """The GPT's positions (arange of the sequence) and causal mask over a
    sequence marked dynamic: one graph for every length."""
    model = GPT().eval()
    tcc.torch.stats.reset()
    with torch.no_grad():
        for s in (5, 9, 16):
            ids = torch.randint(0, 97, (2, s))
            torch._dynamo.mark_dynamic(ids, 1, max=16)
            torch.testing.assert_close(_compiled(model, None)(ids),
                                       model(ids), rtol=RTOL, atol=ATOL)
    assert tcc.torch.stats.graphs == 1
    assert tcc.torch.stats.fallbacks == []


def test_compile_dynamic_batch_mixed_runs_in_eager():
    class Center(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x - x.mean(0))

    model = Center()
    tcc.torch.stats.reset()
    with torch.no_grad():
        for n in (3, 5):
            x = torch.randn(n, 4)
            torch.testing.assert_close(_compiled(model, True)(x), model(x))
    assert any("dynamic dimension" in reason
               for _, reason in tcc.torch.stats.fallbacks)


def test_compile_dynamic_size_as_a_value():
    """A dynamic size used as a number (x / x.shape[0]) has no value in
    the artifact: that node runs in eager, the rest in tcc."""

    class Share(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) / x.shape[0]

    model = Share()
    tcc.torch.stats.reset()
    with torch.no_grad():
        for n in (3, 5):
            x = torch.randn(n, 4)
            torch.testing.assert_close(_compiled(model, True)(x), model(x))
    assert any("is the size of a dynamic dimension, known only at run time"
               in reason for _, reason in tcc.torch.stats.fallbacks)


def test_training_with_a_ragged_last_batch():
    """A training loop whose last batch is smaller: torch.compile makes the
    batch dynamic, the mean loss and the weight gradients sum over it, so
    that graph runs in eager (recorded), and training matches eager step
    by step."""
    import copy
    torch.manual_seed(0)
    model = MLP()
    reference = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)

    def loss(m, x, y):
        return torch.nn.functional.cross_entropy(m(x), y)

    step = torch.compile(lambda x, y: loss(model, x, y), backend="tcc")
    tcc.torch.stats.reset()
    for n in (8, 8, 5, 8):
        x, y = torch.randn(n, 32), torch.randint(0, 10, (n,))
        got = step(x, y)
        got.backward()
        opt.step()
        opt.zero_grad()
        want = loss(reference, x, y)
        want.backward()
        ref_opt.step()
        ref_opt.zero_grad()
        torch.testing.assert_close(got.detach(), want.detach(), rtol=RTOL,
                                   atol=ATOL)
    assert any("reduces over the dynamic dimension" in reason
               for _, reason in tcc.torch.stats.fallbacks)
