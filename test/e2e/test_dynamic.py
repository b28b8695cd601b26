"""A dynamic batch: ONNX models exported with a symbolic batch dimension
compile once and run at any batch size against PyTorch; the runtime checks
the sizes it is given; graphs whose rows interact are refused.

Models are exported here (torch.onnx, dynamo exporter) into a temporary
folder; tcc compiles them through its CLI and they run through the Python
binding and tcc-run."""

import contextlib
import io
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import tcc  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "models"))
import make_models  # noqa: E402

BIN = os.environ["TCC_BIN_DIR"]
TCC = os.path.join(BIN, "tcc")
TCC_RUN = os.path.join(BIN, "tcc-run")


def export_shapes(model, example, path, shapes, names=("x",)):
    """`model` to ONNX with torch.export's `shapes` (one per input)."""
    with contextlib.redirect_stdout(io.StringIO()):
        prog = torch.onnx.export(
            model.eval(), example, dynamo=True, optimize=True,
            opset_version=18, input_names=list(names), output_names=["out"],
            dynamic_shapes=tuple(shapes), external_data=False)
    prog.save(str(path), external_data=False)
    return path


def export(model, example, path, dims, names=("x",)):
    """`model` to ONNX with the batch of each input in `dims` symbolic."""
    batch = torch.export.Dim("batch", min=1, max=64)
    return export_shapes(model, example, path,
                         [{0: batch} if d else None for d in dims], names)


def export_legacy(model, example, path, dims):
    """`model` to ONNX through the TorchScript-based exporter, the input
    `x` and output `y` dynamic in `dims` ({dimension: name})."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, str(path), input_names=["x"],
                          output_names=["y"],
                          dynamic_axes={"x": dims, "y": dims},
                          dynamo=False, opset_version=17)
    return path


def compile_model(path, *flags):
    out = str(path).replace(".onnx", ".so")
    r = subprocess.run([TCC, str(path), "-o", out, *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def check(model, so, inputs, rtol=1e-4, atol=1e-4):
    compiled = tcc.load(so)
    got = compiled(*[x.numpy() for x in inputs])
    with torch.no_grad():
        want = model(*inputs)
    np.testing.assert_allclose(got[0], want.numpy(), rtol=rtol, atol=atol)


@pytest.fixture(scope="module")
def resnet18(tmp_path_factory):
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    path = tmp_path_factory.mktemp("r18") / "resnet18.onnx"
    export(model, (torch.randn(2, 3, 64, 64),), path, [True])
    return model, compile_model(path, "--dim", "batch=1..64")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    torch.manual_seed(0)
    model = make_models._build_encoder().eval()
    path = tmp_path_factory.mktemp("enc") / "encoder.onnx"
    export(model, (torch.randn(2, 16, 768),), path, [True])
    return model, compile_model(path)


@pytest.mark.parametrize("batch", [1, 3, 8, 13])
def test_resnet18_any_batch(resnet18, batch):
    model, so = resnet18
    torch.manual_seed(batch)
    # Convolutions accumulate differently from PyTorch's: rtol 1e-3 as the
    # static resnet18 case of test_models.py.
    check(model, so, [torch.randn(batch, 3, 64, 64)], rtol=1e-3, atol=1e-4)


@pytest.fixture(scope="module")
def encoder_legacy(tmp_path_factory):
    """The encoder through the TorchScript-based exporter, which computes
    its reshapes' targets from Shape: Shape -> Gather -> Unsqueeze ->
    Concat -> Reshape on the dynamic batch."""
    torch.manual_seed(0)
    model = make_models._build_encoder().eval()
    path = export_legacy(model, (torch.randn(2, 16, 768),),
                         tmp_path_factory.mktemp("legacy") / "encoder.onnx",
                         {0: "batch"})
    return model, compile_model(path)


@pytest.mark.parametrize("batch", [1, 5])
def test_encoder_with_shape_code_any_batch(encoder_legacy, batch):
    model, so = encoder_legacy
    torch.manual_seed(batch)
    check(model, so, [torch.randn(batch, 16, 768)], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_encoder_any_batch(encoder, batch):
    model, so = encoder
    torch.manual_seed(batch)
    check(model, so, [torch.randn(batch, 16, 768)], rtol=1e-3, atol=1e-4)


def test_metadata_names_the_symbol(resnet18):
    _, so = resnet18
    m = tcc.load(so)
    assert m.inputs[0].shape == ("batch", 3, 64, 64)
    assert m.outputs[0].shape == ("batch", 1000)


def test_header_takes_the_batch(resnet18):
    _, so = resnet18
    header = open(so[:-3] + ".h").read()
    assert "batch: 1 to 64" in header
    assert "int64_t batch, void *workspace" in header


class TwoInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x, y):
        return torch.relu(self.fc(x)) * y


@pytest.fixture(scope="module")
def two_inputs(tmp_path_factory):
    torch.manual_seed(0)
    model = TwoInputs().eval()
    path = tmp_path_factory.mktemp("two") / "two.onnx"
    export(model, (torch.randn(2, 8), torch.randn(2, 4)), path, [True, True],
           names=("x", "y"))
    return model, compile_model(path, "--dim", "batch=1..10")


def test_two_batched_inputs(two_inputs):
    model, so = two_inputs
    for batch in (1, 5, 10):
        check(model, so, [torch.randn(batch, 8), torch.randn(batch, 4)])


def test_inputs_that_disagree_are_refused(two_inputs):
    _, so = two_inputs
    m = tcc.load(so)
    with pytest.raises(ValueError, match=r"input 1 'y' has batch = 3 "
                       r"\(dimension 0\), input 0 'x' has batch = 2"):
        m(np.zeros((2, 8), np.float32), np.zeros((3, 4), np.float32))


def test_a_batch_out_of_bounds_is_refused(two_inputs):
    _, so = two_inputs
    m = tcc.load(so)
    with pytest.raises(ValueError, match=r"has batch = 11 \(dimension 0\), "
                       r"outside the compiled bounds 1\.\.10"):
        m(np.zeros((11, 8), np.float32), np.zeros((11, 4), np.float32))


def test_tcc_run_sizes_outputs_by_the_inputs(two_inputs, tmp_path):
    model, so = two_inputs
    x, y = torch.randn(6, 8), torch.randn(6, 4)
    np.save(tmp_path / "input_0.npy", x.numpy())
    np.save(tmp_path / "input_1.npy", y.numpy())
    with torch.no_grad():
        np.save(tmp_path / "output_0.npy", model(x, y).numpy())
    r = subprocess.run([TCC_RUN, so, "--inputs", str(tmp_path), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    np.save(tmp_path / "input_1.npy", np.zeros((5, 4), np.float32))
    r = subprocess.run([TCC_RUN, so, "--inputs", str(tmp_path), "--check"],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "the same symbol must have one size" in r.stderr


class MixesRows(torch.nn.Module):
    def forward(self, x):
        return x - x.mean(0, keepdim=True)


def test_a_graph_that_mixes_rows_is_refused(tmp_path):
    path = export(MixesRows(), (torch.randn(2, 4),), tmp_path / "mix.onnx",
                  [True])
    r = subprocess.run([TCC, str(path), "-o", str(tmp_path / "mix.so")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "reduces over the dynamic dimension, so the batch cannot vary" \
        in r.stderr
    assert not (tmp_path / "mix.so").exists()
    # Fixing the batch compiles it.
    r = subprocess.run([TCC, str(path), "-o", str(tmp_path / "mix.so"),
                        "--input-shape", "x=4x4"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_bounded_batch_that_mixes_rows_runs_padded(tmp_path):
    """With a bound, a batch some op mixes (here a mean over it) compiles
    as padded buckets (tcc-pad-dynamic-dims), the mean over the rows
    given."""
    model = MixesRows()
    path = export(model, (torch.randn(2, 4),), tmp_path / "mix.onnx", [True])
    so = compile_model(path, "--dim", "batch=1..40")
    for batch in (1, 3, 16, 17, 40):
        check(model, so, [torch.randn(batch, 4)])


def export_seq(model, example, path, dims):
    """`model` to ONNX with the dimensions `dims` ({input dim: Dim})."""
    return export_shapes(model, example, path, [dims])


@pytest.fixture(scope="module")
def encoder_seq(tmp_path_factory):
    """The encoder with a dynamic sequence length: attention contracts and
    softmax normalizes over it, so it runs padded to buckets."""
    torch.manual_seed(0)
    model = make_models._build_encoder().eval()
    path = tmp_path_factory.mktemp("seq") / "encoder.onnx"
    export_seq(model, (torch.randn(2, 16, 768),), path,
               {1: torch.export.Dim("seq", min=1, max=128)})
    return model, compile_model(path, "--dim", "seq=1..128")


@pytest.mark.parametrize("seq", [1, 16, 77, 128])
def test_encoder_any_sequence_length(encoder_seq, seq):
    model, so = encoder_seq
    torch.manual_seed(seq)
    check(model, so, [torch.randn(2, seq, 768)], rtol=1e-3, atol=1e-4)


def test_sequence_metadata_and_bounds(encoder_seq, tmp_path):
    model, so = encoder_seq
    m = tcc.load(so)
    assert m.inputs[0].shape == (2, "seq", 768)
    assert m.outputs[0].shape == (2, "seq", 768)
    with pytest.raises(ValueError, match=r"has seq = 129 \(dimension 1\), "
                       r"outside the compiled bounds 1\.\.128"):
        m(np.zeros((2, 129, 768), np.float32))
    # tcc-run sizes the output by the input's sequence.
    x = torch.randn(2, 50, 768)
    np.save(tmp_path / "input_0.npy", x.numpy())
    with torch.no_grad():
        np.save(tmp_path / "output_0.npy", model(x).numpy())
    r = subprocess.run([TCC_RUN, so, "--inputs", str(tmp_path), "--check",
                        "--rtol", "1e-3", "--atol", "1e-4"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_sequence_needs_a_bound(tmp_path):
    torch.manual_seed(0)
    path = export_seq(make_models._build_encoder(), (torch.randn(1, 16, 768),),
                      tmp_path / "enc.onnx",
                      {1: torch.export.Dim("seq", min=1, max=128)})
    r = subprocess.run([TCC, str(path), "-o", str(tmp_path / "enc.so")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "dynamic dimension 'seq' is padded to fixed buckets and needs an " \
        "upper bound" in r.stderr, r.stderr
    assert not (tmp_path / "enc.so").exists()


@pytest.fixture(scope="module")
def encoder_batch_seq(tmp_path_factory):
    """The encoder with a dynamic batch and sequence length: buckets of the
    sequence, each run as slabs of the batch."""
    torch.manual_seed(0)
    model = make_models._build_encoder().eval()
    path = tmp_path_factory.mktemp("both") / "encoder.onnx"
    export_seq(model, (torch.randn(2, 16, 768),), path,
               {0: torch.export.Dim("batch", min=1, max=4),
                1: torch.export.Dim("seq", min=1, max=32)})
    return model, compile_model(path, "--dim", "seq=1..32", "--dim",
                                "batch=1..4")


@pytest.mark.parametrize("batch,seq", [(1, 1), (3, 17), (4, 32), (2, 30)])
def test_encoder_any_batch_and_sequence(encoder_batch_seq, batch, seq):
    model, so = encoder_batch_seq
    assert tcc.load(so).inputs[0].shape == ("batch", "seq", 768)
    torch.manual_seed(batch * seq)
    check(model, so, [torch.randn(batch, seq, 768)], rtol=1e-3, atol=1e-4)


@pytest.fixture(scope="module")
def decoder_seq(tmp_path_factory):
    """The GPT-style decoder block with a dynamic sequence length: its
    causal mask is ones(S, S).tril() of the run's S, which the dynamo
    exporter writes as Expand to a size from Shape, then Trilu."""
    torch.manual_seed(0)
    model = make_models._build_decoder().eval()
    path = tmp_path_factory.mktemp("dec") / "decoder.onnx"
    export_seq(model, (torch.randn(1, 16, 768),), path,
               {1: torch.export.Dim("seq", min=1, max=128)})
    return model, compile_model(path, "--dim", "seq=1..128")


@pytest.mark.parametrize("seq", [1, 16, 77, 128])
def test_decoder_causal_mask_any_sequence_length(decoder_seq, seq):
    model, so = decoder_seq
    torch.manual_seed(seq)
    check(model, so, [torch.randn(1, seq, 768)], rtol=1e-3, atol=1e-4)


@pytest.fixture(scope="module")
def decoder_legacy_batch_seq(tmp_path_factory):
    """The decoder through the TorchScript-based exporter with a dynamic
    batch and sequence: its mask is ConstantOfShape of [S, S] (from Shape)
    and Trilu; its reshapes' targets come from Shape code."""
    torch.manual_seed(0)
    model = make_models._build_decoder().eval()
    path = export_legacy(model, (torch.randn(2, 16, 768),),
                         tmp_path_factory.mktemp("declegacy") / "decoder.onnx",
                         {0: "batch", 1: "seq"})
    return model, compile_model(path, "--dim", "seq=1..32", "--dim",
                                "batch=1..4")


@pytest.mark.parametrize("batch,seq", [(1, 1), (3, 17), (4, 32)])
def test_decoder_legacy_any_batch_and_sequence(decoder_legacy_batch_seq,
                                               batch, seq):
    model, so = decoder_legacy_batch_seq
    torch.manual_seed(batch * 100 + seq)
    check(model, so, [torch.randn(batch, seq, 768)], rtol=1e-3, atol=1e-4)


@pytest.fixture(scope="module", params=["dynamo", "legacy"])
def buffer_mask(request, tmp_path_factory):
    torch.manual_seed(0)
    model = make_models._build_buffer_mask_attention().eval()
    path = tmp_path_factory.mktemp("nano") / "nano.onnx"
    example = (torch.randn(2, 16, 64),)
    if request.param == "dynamo":
        export_seq(model, example, path,
                   {1: torch.export.Dim("seq", min=1, max=32)})
    else:
        export_legacy(model, example, path, {1: "seq"})
    return model, compile_model(path, "--dim", "seq=1..32")


@pytest.mark.parametrize("seq", [1, 7, 16, 32])
def test_buffer_mask_any_sequence_length(buffer_mask, seq):
    model, so = buffer_mask
    torch.manual_seed(seq)
    check(model, so, [torch.randn(2, seq, 64)], rtol=1e-4, atol=1e-5)


def test_buffer_mask_bound_beyond_the_buffer(tmp_path):
    """The buffer holds 32 positions: a bound of 64 is refused, naming the
    slice and the bound to give."""
    path = export_seq(make_models._build_buffer_mask_attention().eval(),
                      (torch.randn(2, 16, 64),), tmp_path / "nano.onnx",
                      {1: torch.export.Dim("seq", min=1, max=32)})
    r = subprocess.run([TCC, str(path), "-o", str(tmp_path / "n.so"),
                        "--dim", "seq=1..64"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "(bound the dimension by 32)" in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "n.so")


def test_two_sequences_are_refused(tmp_path):
    class Pair(torch.nn.Module):
        def forward(self, a, b):
            return a.sum(1) + b.sum(1)

    path = export_shapes(Pair(), (torch.randn(2, 5), torch.randn(2, 7)),
                         tmp_path / "pair.onnx",
                         [{1: torch.export.Dim("m", max=9)},
                          {1: torch.export.Dim("n", max=9)}], ("a", "b"))
    r = subprocess.run([TCC, str(path), "-o", str(tmp_path / "p.so"),
                        "--dim", "m=1..9", "--dim", "n=1..9"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "the inputs have dynamic dimensions 'm' and 'n'; tcc compiles " \
        "a batch and one other dynamic dimension" in r.stderr, r.stderr
    assert not (tmp_path / "p.so").exists()


def test_input_shape_makes_a_static_model_dynamic(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    path = tmp_path / "static.onnx"
    with contextlib.redirect_stdout(io.StringIO()):
        torch.onnx.export(model, (torch.randn(2, 8),), str(path),
                          dynamo=True, input_names=["x"],
                          external_data=False)
    so = compile_model(path, "--input-shape", "x=nx8", "--dim", "n=1..9")
    assert tcc.load(so).inputs[0].shape == ("n", 8)
    check(model, so, [torch.randn(7, 8)])


@pytest.mark.parametrize("flags,message", [
    (["--dim", "batch=0..4"], "invalid or repeated --dim"),
    (["--dim", "batch=9..4"], "invalid or repeated --dim"),
    (["--dim", "seq=1..4"], "--dim seq names no dynamic dimension"),
    (["--input-shape", "x=-1x4"], "invalid or repeated --input-shape"),
])
def test_bad_flags(tmp_path, flags, message):
    model = tmp_path / "m.onnx"
    with contextlib.redirect_stdout(io.StringIO()):
        torch.onnx.export(MixesRows(), (torch.randn(2, 4),), str(model),
                          dynamo=True, input_names=["x"],
                          external_data=False)
    r = subprocess.run([TCC, str(model), "-o", str(tmp_path / "m.so"),
                        *flags], capture_output=True, text=True)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr


def test_pointer_calls_refuse_symbolic_models(two_inputs):
    """_run_cached and _run_pointers (calls on bare addresses, which size
    nothing) take static models only: a symbolic one is a TypeError
    pointing at Model.run, not a run at some size."""
    _, so = two_inputs
    m = tcc.load(so)
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="has symbolic dimensions; run it "
                       "with arrays"):
        m._run_cached([a.ctypes.data, a.ctypes.data])
    with pytest.raises(TypeError, match="has symbolic dimensions"):
        m._run_pointers([a.ctypes.data, a.ctypes.data], [a.ctypes.data])


def test_tensor_calls_bind_symbolic_models(two_inputs):
    """_run_args (the torch backend's call on tensors) reads the tensors'
    shapes: they bind the batch, checked as Model.run checks arrays."""
    model, so = two_inputs
    m = tcc.load(so)
    x, y = torch.randn(3, 8), torch.randn(3, 4)
    got = m._run_args([x, y], (0, 1), torch.utils.dlpack.from_dlpack)
    with torch.no_grad():
        want = model(x, y)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"input 1 'y' has batch = 2 "
                       r"\(dimension 0\), input 0 'x' has batch = 3"):
        m._run_args([x, torch.randn(2, 4)], (0, 1), None)


def test_compile_api_bounds(tmp_path):
    """tcc.compile(input_shapes=..., dims=...): bounds that cannot hold are
    a ValueError naming the dimension, before anything is compiled."""
    model = tmp_path / "m.onnx"
    with contextlib.redirect_stdout(io.StringIO()):
        torch.onnx.export(torch.nn.Linear(4, 2), (torch.randn(2, 4),),
                          str(model), dynamo=True, input_names=["x"],
                          external_data=False)
    for bounds in [(0, 4), (9, 4)]:
        with pytest.raises(ValueError, match="dims: bounds of 'n' must "
                           "satisfy 1 <= min <= max"):
            tcc.compile(str(model), input_shapes={"x": ["n", 4]},
                        dims={"n": bounds})
    m = tcc.compile(str(model), input_shapes={"x": ["n", 4]},
                    dims={"n": (1, 8)})
    assert m.inputs[0].shape == ("n", 4)


def test_torchscript_inputs_take_fixed_sizes(tmp_path):
    """A dynamic --input-shape is for ONNX models: for a TorchScript file
    it is one diagnostic, and no artifact."""
    path = tmp_path / "m.pt"
    torch.jit.save(torch.jit.trace(torch.nn.Linear(4, 2),
                                   torch.randn(2, 4)), str(path))
    out = tmp_path / "m.so"
    r = subprocess.run([TCC, str(path), "-o", str(out), "--input-shape",
                        "x=?x4"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "TorchScript inputs take fixed sizes; dynamic dimensions are " \
        "for ONNX models" in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("upper", [1, 0])
def test_trilu_k_at_run_time(tmp_path, upper):
    # k decides which elements are kept, no shape: from a graph input it is
    # an operand of the run, every value of it against NumPy's triu/tril.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("Trilu", ["x", "k"], ["y"], upper=upper)], "trilu",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 4, 5]),
         h.make_tensor_value_info("k", T.INT64, [])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 4, 5])])
    path = tmp_path / "trilu.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 14)]),
              str(path))
    model = tcc.load(compile_model(path))
    x = np.random.default_rng(0).standard_normal((2, 4, 5), np.float32)
    for k in (-5, -1, 0, 2, 4, 9):
        got = model(x, np.array(k, np.int64))[0]
        want = np.triu(x, k) if upper else np.tril(x, k)
        np.testing.assert_array_equal(got, want, err_msg=f"k={k}")


def test_slice_start_at_run_time(tmp_path):
    # Starts from a graph input, ends the starts plus 2: a window of two
    # columns from every start (negative: from the end) against NumPy;
    # starts past the last window read the last one (clamped).
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("Constant", [], ["two"],
                     value=h.make_tensor("two", T.INT64, [1], [2])),
         h.make_node("Add", ["i", "two"], ["e"]),
         h.make_node("Constant", [], ["axes"],
                     value=h.make_tensor("axes", T.INT64, [1], [1])),
         h.make_node("Slice", ["x", "i", "e", "axes"], ["y"])], "window",
        [h.make_tensor_value_info("x", T.FLOAT, [3, 8]),
         h.make_tensor_value_info("i", T.INT64, [1])],
        [h.make_tensor_value_info("y", T.FLOAT, [3, 2])])
    path = tmp_path / "window.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]),
              str(path))
    model = tcc.load(compile_model(path))
    x = np.random.default_rng(0).standard_normal((3, 8), np.float32)
    for i in (0, 3, 6, -2, -8):
        got = model(x, np.array([i], np.int64))[0]
        np.testing.assert_array_equal(got, x[:, i:i + 2 if i != -2 else None],
                                      err_msg=f"start {i}")
    got = model(x, np.array([7], np.int64))[0]
    np.testing.assert_array_equal(got, x[:, 6:8])


def _save(graph, path, opset=13):
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]),
              str(path))
    return path


def test_nonzero_at_run_time(tmp_path):
    # NonZero of a graph input: its count depends on the data. The artifact
    # computes the coordinates at their bound (every element) and reports
    # the count; the binding returns [rank, count] against NumPy's, for no,
    # some and every element set, run after run on one loaded model.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("NonZero", ["x"], ["y"])], "nonzero",
        [h.make_tensor_value_info("x", T.FLOAT, [3, 4])],
        [h.make_tensor_value_info("y", T.INT64, [2, None])])
    so = compile_model(_save(graph, tmp_path / "nz.onnx"))
    model = tcc.load(so)
    assert model.outputs[0].shape == (2, "y")
    rng = np.random.default_rng(0)
    for x in (np.zeros((3, 4), np.float32), np.ones((3, 4), np.float32),
              (rng.random((3, 4)) > 0.6).astype(np.float32) * 2.5,
              np.eye(3, 4, dtype=np.float32)):
        got = model(x)[0]
        np.testing.assert_array_equal(got, np.array(np.nonzero(x)))
    # Its outputs' sizes come from the run: none may be given.
    with pytest.raises(TypeError, match="computes the sizes of its outputs "
                       "as it runs; call it without outputs"):
        model.run([np.eye(3, 4, dtype=np.float32)],
                  [np.zeros((2, 12), np.int64)])
    # tcc-run writes the output at the run's size.
    x = np.eye(3, 4, dtype=np.float32)
    folder = tmp_path / "in"
    folder.mkdir()
    np.save(folder / "input_0.npy", x)
    out = tmp_path / "out"
    r = subprocess.run([TCC_RUN, so, "--inputs", str(folder), "--outputs",
                        str(out), "--bench", "3"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "i64[2x3]" in r.stdout, r.stdout


def test_compress_at_run_time(tmp_path):
    # Compress with a condition from a graph input, along an axis and
    # flattened, against NumPy's compress.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for axis, length in ((0, 4), (1, 6), (None, 24), (1, 3)):
        attrs = {} if axis is None else {"axis": axis}
        out_shape = [None] if axis is None else \
            ([None, 6] if axis == 0 else [4, None])
        graph = h.make_graph(
            [h.make_node("Compress", ["x", "c"], ["y"], **attrs)], "compress",
            [h.make_tensor_value_info("x", T.FLOAT, [4, 6]),
             h.make_tensor_value_info("c", T.BOOL, [length])],
            [h.make_tensor_value_info("y", T.FLOAT, out_shape)])
        model = tcc.load(compile_model(
            _save(graph, tmp_path / f"c{axis}_{length}.onnx")))
        rng = np.random.default_rng(length)
        for c in (np.zeros(length, bool), np.ones(length, bool),
                  rng.random(length) > 0.5):
            got = model(x, c)[0]
            np.testing.assert_array_equal(got, np.compress(c, x, axis=axis),
                                          err_msg=f"axis {axis}, {c}")


def test_slice_bounds_at_run_time(tmp_path):
    # Starts and ends from graph inputs on one axis, then on two: each
    # sliced size is computed by the run (ONNX's clamping), against NumPy's
    # slicing, for steps forward and backward and bounds past either end.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    x = np.arange(30, dtype=np.float32).reshape(3, 10)
    big = np.iinfo(np.int64).max
    for step, bounds in (
            (1, [(0, 10), (2, 5), (-3, big), (7, 2), (-100, 4), (5, 5)]),
            (3, [(0, 10), (1, -1), (9, 100)]),
            (-2, [(9, -big), (-1, 0), (3, 8), (100, 2)])):
        graph = h.make_graph(
            [h.make_node("Constant", [], ["axes"],
                         value=h.make_tensor("axes", T.INT64, [1], [1])),
             h.make_node("Constant", [], ["steps"],
                         value=h.make_tensor("steps", T.INT64, [1], [step])),
             h.make_node("Slice", ["x", "s", "e", "axes", "steps"], ["y"])],
            "bounds",
            [h.make_tensor_value_info("x", T.FLOAT, [3, 10]),
             h.make_tensor_value_info("s", T.INT64, [1]),
             h.make_tensor_value_info("e", T.INT64, [1])],
            [h.make_tensor_value_info("y", T.FLOAT, [3, None])])
        model = tcc.load(compile_model(
            _save(graph, tmp_path / f"bounds{step}.onnx")))
        for s, e in bounds:
            got = model(x, np.array([s], np.int64), np.array([e], np.int64))[0]
            np.testing.assert_array_equal(got, x[:, s:e:step],
                                          err_msg=f"{s}:{e}:{step}")
    # Both axes (no axes input: the first two), one size each (y_0, y_1).
    graph = h.make_graph(
        [h.make_node("Slice", ["x", "s", "e"], ["y"])], "both",
        [h.make_tensor_value_info("x", T.FLOAT, [3, 10]),
         h.make_tensor_value_info("s", T.INT64, [2]),
         h.make_tensor_value_info("e", T.INT64, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [None, None])])
    model = tcc.load(compile_model(_save(graph, tmp_path / "both.onnx")))
    for (s0, s1), (e0, e1) in (((0, 0), (3, 10)), ((1, 2), (3, 5)),
                               ((-1, -4), (big, big)), ((2, 7), (1, 2))):
        got = model(x, np.array([s0, s1], np.int64),
                    np.array([e0, e1], np.int64))[0]
        np.testing.assert_array_equal(got, x[s0:e0, s1:e1],
                                      err_msg=f"{s0}:{e0}, {s1}:{e1}")


def test_sizes_from_values_need_a_bound(tmp_path):
    # Range, ConstantOfShape and OneHot whose limit, shape or depth is a
    # graph input: the length is computed by the run, up to the bound
    # --dim gives the output's size; without one, the error names the flag.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("Range", ["start", "limit", "delta"], ["r"]),
         h.make_node("ConstantOfShape", ["n"], ["c"],
                     value=h.make_tensor("v", T.FLOAT, [1], [2.5])),
         h.make_node("OneHot", ["idx", "depth", "onoff"], ["o"])],
        "sizes",
        [h.make_tensor_value_info("start", T.FLOAT, []),
         h.make_tensor_value_info("limit", T.FLOAT, []),
         h.make_tensor_value_info("delta", T.FLOAT, []),
         h.make_tensor_value_info("n", T.INT64, [1]),
         h.make_tensor_value_info("idx", T.INT64, [3]),
         h.make_tensor_value_info("depth", T.INT64, []),
         h.make_tensor_value_info("onoff", T.FLOAT, [2])],
        [h.make_tensor_value_info("r", T.FLOAT, [None]),
         h.make_tensor_value_info("c", T.FLOAT, [None]),
         h.make_tensor_value_info("o", T.FLOAT, [3, None])])
    path = _save(graph, tmp_path / "sizes.onnx")
    r = subprocess.run([TCC, str(path), "-o", str(tmp_path / "s.so")],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "(Range, opset 13): the length of the range is known only at " \
        "run time: give its upper bound with --dim r=MAX" in r.stderr
    assert not os.path.exists(tmp_path / "s.so")
    # (One size the run computes per graph: each op in a model of its own.)
    cases = {
        "r": (["start", "limit", "delta"], 0),
        "c": (["n"], 1),
        "o": (["idx", "depth", "onoff"], 2),
    }
    f32 = np.float32
    for out, (names, k) in cases.items():
        node = graph.node[k]
        inputs = [i for i in graph.input if i.name in names]
        g = h.make_graph([node], out, inputs,
                         [o for o in graph.output if o.name == out])
        model = tcc.load(compile_model(_save(g, tmp_path / f"{out}.onnx"),
                                       "--dim", f"{out}=64"))
        if out == "r":
            for a, b, d in ((0, 5, 1), (1.5, 9, 2.5), (3, -4, -0.5),
                            (2, 2, 1), (5, 0, 1)):
                got = model(f32(a), f32(b), f32(d))[0]
                np.testing.assert_allclose(got, np.arange(a, b, d, f32),
                                           rtol=1e-6)
        elif out == "c":
            for n in (0, 1, 17, 64):
                got = model(np.array([n], np.int64))[0]
                np.testing.assert_array_equal(got, np.full(n, 2.5, f32))
        else:
            idx = np.array([0, 4, -1], np.int64)
            for depth in (5, 9):
                got = model(idx, np.array(depth, np.int64),
                            np.array([0, 1], f32))[0]
                want = np.eye(depth, dtype=f32)[idx % depth]
                np.testing.assert_array_equal(got, want)


def test_a_computed_size_past_its_bound_is_an_error(tmp_path):
    # ConstantOfShape asked for more than --dim allows: a ValueError that
    # names the size and the flag, not a write past the buffers.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("ConstantOfShape", ["n"], ["c"])], "fill",
        [h.make_tensor_value_info("n", T.INT64, [1])],
        [h.make_tensor_value_info("c", T.FLOAT, [None])])
    model = tcc.load(compile_model(_save(graph, tmp_path / "fill.onnx"),
                                   "--dim", "c=8"))
    np.testing.assert_array_equal(model(np.array([8], np.int64))[0],
                                  np.zeros(8, np.float32))
    with pytest.raises(Exception, match=r"the size c the run computed "
                       r"from its inputs is 9, outside 0\.\.8 \(compile "
                       r"with a larger --dim c=MAX\)"):
        model(np.array([9], np.int64))
    with pytest.raises(Exception, match=r"the size c the run computed "
                       r"from its inputs is -1: the inputs give it no valid "
                       r"size"):
        model(np.array([-1], np.int64))


def test_shapes_from_one_value(tmp_path):
    # Reshape to one dimension, Expand where one dimension takes its size
    # from the shape, and Tile of a vector, their shape operands graph
    # inputs: the first is static (every element in a row), the others a
    # size the run computes up to --dim; against NumPy.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    f32 = np.float32
    x = np.arange(6, dtype=f32).reshape(2, 3)
    cases = [
        ("Reshape", [h.make_tensor_value_info("x", T.FLOAT, [2, 3]),
                     h.make_tensor_value_info("s", T.INT64, [1])], [6], [],
         [(x, np.array([-1], np.int64), x.reshape(-1)),
          (x, np.array([6], np.int64), x.reshape(-1))]),
        ("Expand", [h.make_tensor_value_info("x", T.FLOAT, [3, 1]),
                    h.make_tensor_value_info("s", T.INT64, [2])], [3, None],
         ["--dim", "y=16"],
         [(x[0].reshape(3, 1), np.array([3, n], np.int64),
           np.broadcast_to(x[0].reshape(3, 1), (3, n))) for n in (0, 1, 5, 16)]
         + [(x[0].reshape(3, 1), np.array([1, 4], np.int64),
             np.broadcast_to(x[0].reshape(3, 1), (3, 4)))]),
        ("Tile", [h.make_tensor_value_info("x", T.FLOAT, [3]),
                  h.make_tensor_value_info("s", T.INT64, [1])], [None],
         ["--dim", "y=20"],
         [(x[1], np.array([r], np.int64), np.tile(x[1], r))
          for r in (0, 1, 4, 6)]),
    ]
    for op, inputs, out_shape, flags, runs in cases:
        graph = h.make_graph(
            [h.make_node(op, ["x", "s"], ["y"])], op.lower(), inputs,
            [h.make_tensor_value_info("y", T.FLOAT, out_shape)])
        model = tcc.load(compile_model(
            _save(graph, tmp_path / f"{op}.onnx"), *flags))
        for a, s, want in runs:
            np.testing.assert_array_equal(model(a, s)[0], want,
                                          err_msg=f"{op} {s}")


def test_loop_iterations_at_run_time(tmp_path):
    # A Loop whose number of iterations the run decides (a trip count that
    # is a graph input, a condition the body computes) stacks one scan row
    # per iteration made: a size the run computes, up to --dim. The body
    # also swaps two carried values. Against the same loop in Python.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    f32 = np.float32
    body = h.make_graph(
        [h.make_node("Mul", ["x", "two"], ["x2"]),
         h.make_node("ReduceMax", ["x2"], ["top"], keepdims=0),
         h.make_node("Less", ["top", "limit"], ["go"]),
         h.make_node("Identity", ["a"], ["b_next"]),
         h.make_node("Identity", ["b"], ["a_next"]),
         h.make_node("Identity", ["x"], ["row"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []),
         h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("x", T.FLOAT, [2]),
         h.make_tensor_value_info("a", T.FLOAT, [2]),
         h.make_tensor_value_info("b", T.FLOAT, [2])],
        [h.make_tensor_value_info("go", T.BOOL, []),
         h.make_tensor_value_info("x2", T.FLOAT, [2]),
         h.make_tensor_value_info("a_next", T.FLOAT, [2]),
         h.make_tensor_value_info("b_next", T.FLOAT, [2]),
         h.make_tensor_value_info("row", T.FLOAT, [2])])
    graph = h.make_graph(
        [h.make_node("Loop", ["m", "", "x0", "a0", "b0"],
                     ["x", "a", "b", "rows"], body=body)],
        "loop",
        [h.make_tensor_value_info("m", T.INT64, []),
         h.make_tensor_value_info("x0", T.FLOAT, [2]),
         h.make_tensor_value_info("a0", T.FLOAT, [2]),
         h.make_tensor_value_info("b0", T.FLOAT, [2])],
        [h.make_tensor_value_info("x", T.FLOAT, [2]),
         h.make_tensor_value_info("a", T.FLOAT, [2]),
         h.make_tensor_value_info("b", T.FLOAT, [2]),
         h.make_tensor_value_info("rows", T.FLOAT, [None, 2])],
        [h.make_tensor("two", T.FLOAT, [], [2.0]),
         h.make_tensor("limit", T.FLOAT, [], [100.0])])
    path = _save(graph, tmp_path / "loop.onnx")
    r = subprocess.run([TCC, str(path), "-o", str(tmp_path / "l.so")],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "(Loop, opset 13): the number of iterations is known only at " \
        "run time: give its upper bound with --dim rows=MAX" in r.stderr
    model = tcc.load(compile_model(path, "--dim", "rows=10"))

    def reference(m, x, a, b):
        rows = []
        for _ in range(m):
            rows.append(x)
            x = x * 2
            a, b = b, a
            if x.max() >= 100:
                break
        return x, a, b, np.array(rows, f32).reshape(-1, 2)

    a0, b0 = np.array([1, 2], f32), np.array([3, 4], f32)
    for m, x0 in ((0, [1, 3]), (1, [1, 3]), (3, [1, 3]), (10, [1, 3]),
                  (10, [60, 1]), (10, [200, 1]), (10, [0.25, 0.125])):
        x0 = np.array(x0, f32)
        given = x0.copy()
        got = model(np.array(m, np.int64), x0, a0, b0)
        # (The loop carries x0 from the input: the input stays as given.)
        np.testing.assert_array_equal(x0, given)
        for g, w in zip(got, reference(m, x0, a0, b0)):
            np.testing.assert_array_equal(g, w, err_msg=f"m={m} x0={x0}")
    # Eleven iterations do not fit a bound of ten: an error, not a cut.
    with pytest.raises(Exception, match=r"the size rows the run computed "
                       r"from its inputs is 11, outside 0\.\.10"):
        model(np.array(11, np.int64), np.array([0.001, 0], f32), a0, b0)


def test_shapes_from_several_values(tmp_path):
    # Pad by pads, Reshape to a shape, Expand to a shape and Tile by
    # repeats that are graph inputs, several sizes of one result known only
    # at run time: one size the run computes per dimension, each bounded
    # by --dim (NAME_<d>=MAX, else NAME=MAX for every dimension); against
    # NumPy.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    f32, i64 = np.float32, np.int64
    x = np.arange(1, 13, dtype=f32).reshape(3, 4)

    def build(name, nodes, inputs, opset=18, *flags):
        graph = h.make_graph(nodes, name, inputs,
                             [h.make_tensor_value_info("y", T.FLOAT, None)])
        return tcc.load(compile_model(
            _save(graph, tmp_path / f"{name}.onnx", opset), *flags))

    data = h.make_tensor_value_info("x", T.FLOAT, [3, 4])
    pads = h.make_tensor_value_info("p", T.INT64, [4])
    for mode, np_mode in (("constant", "constant"), ("edge", "edge"),
                          ("reflect", "reflect"), ("wrap", "wrap")):
        model = build(f"pad_{mode}",
                      [h.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)],
                      [data, pads, h.make_tensor_value_info("v", T.FLOAT, [])],
                      19, "--dim", "y_0=9", "--dim", "y_1=12")
        for p in ([0, 0, 0, 0], [1, 2, 0, 3], [2, 3, 3, 3], [0, 0, 6, 0]):
            if mode == "reflect" and max(p[0], p[2]) > 2:
                continue  # (NumPy reflects further than ONNX allows)
            got = model(x, np.array(p, i64), f32(-5))[0]
            kw = {"constant_values": -5} if mode == "constant" else {}
            want = np.pad(x, ((p[0], p[2]), (p[1], p[3])), np_mode, **kw)
            np.testing.assert_array_equal(got, want, err_msg=f"{mode} {p}")
        # Negative pads crop.
        got = model(x, np.array([-1, 0, 0, -2], i64), f32(0))[0]
        np.testing.assert_array_equal(got, x[1:, :2], err_msg=mode)

    model = build("reshape", [h.make_node("Reshape", ["x", "s"], ["y"])],
                  [data, h.make_tensor_value_info("s", T.INT64, [3])], 18,
                  "--dim", "y=12")
    for s in ([2, 3, 2], [0, -1, 2], [12, 1, 1], [1, 1, 12], [-1, 2, 2]):
        want = x.reshape([d or x.shape[k] for k, d in enumerate(s)])
        np.testing.assert_array_equal(model(x, np.array(s, i64))[0], want,
                                      err_msg=str(s))
    for s in ([5, 5, 1], [-1, -1, 3], [3, 4, -2]):
        with pytest.raises(Exception, match=r"the size y_0 the run computed "
                           r"from its inputs is -1: the inputs give it no "
                           r"valid size"):
            model(x, np.array(s, i64))

    model = build("expand", [h.make_node("Expand", ["x", "s"], ["y"])],
                  [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 1]),
                   h.make_tensor_value_info("s", T.INT64, [3])], 18,
                  "--dim", "y=8")
    col = x[0].reshape(1, 4, 1)
    for s in ([1, 4, 1], [3, 1, 5], [8, 4, 8], [0, 1, 2]):
        np.testing.assert_array_equal(
            model(col, np.array(s, i64))[0],
            col * np.ones(s, f32), err_msg=str(s))

    model = build("tile", [h.make_node("Tile", ["x", "r"], ["y"])],
                  [data, h.make_tensor_value_info("r", T.INT64, [2])], 18,
                  "--dim", "y_0=9", "--dim", "y_1=8")
    for r in ([1, 1], [2, 1], [3, 2], [0, 2]):
        np.testing.assert_array_equal(model(x, np.array(r, i64))[0],
                                      np.tile(x, r), err_msg=str(r))
    with pytest.raises(Exception, match=r"the size y_0 the run computed "
                       r"from its inputs is 12, outside 0\.\.9 \(compile with "
                       r"a larger --dim y_0=MAX\)"):
        model(x, np.array([4, 1], i64))


@pytest.mark.parametrize("mode,ctm,nearest", [
    ("nearest", "half_pixel", "round_prefer_floor"),
    ("nearest", "asymmetric", "floor"),
    ("nearest", "align_corners", "round_prefer_ceil"),
    ("nearest", "half_pixel_symmetric", "ceil"),
    ("linear", "half_pixel", None),
    ("linear", "align_corners", None),
    ("linear", "pytorch_half_pixel", None),
    ("linear", "asymmetric", None),
])
def test_resize_at_run_time(tmp_path, mode, ctm, nearest):
    # Resize by scales or sizes that are graph inputs: the taps computed as
    # the model runs, each resized axis a size the run computes; against
    # ONNX's reference implementation (which the backend suite's data
    # comes from).
    onnx = pytest.importorskip("onnx")
    reference = pytest.importorskip("onnx.reference")
    h, T = onnx.helper, onnx.TensorProto
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 5), np.float32)
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm,
             "axes": [2, 3]}
    if nearest:
        attrs["nearest_mode"] = nearest
    for which, dtype, values in (
            ("sizes", T.INT64, [[8, 10], [2, 3], [4, 5], [7, 13], [1, 1]]),
            ("scales", T.FLOAT, [[2.0, 2.0], [0.5, 0.6], [1.5, 2.5],
                                 [3.0, 1.0]])):
        inputs = ["x", "", "", "s"] if which == "sizes" else ["x", "", "s"]
        graph = h.make_graph(
            [h.make_node("Resize", inputs, ["y"], **attrs)], "resize",
            [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 4, 5]),
             h.make_tensor_value_info("s", dtype, [2])],
            [h.make_tensor_value_info("y", T.FLOAT, None)])
        path = _save(graph, tmp_path / f"resize_{which}.onnx", 19)
        model = tcc.load(compile_model(path, "--dim", "y_2=16",
                                       "--dim", "y_3=16"))
        ref = reference.ReferenceEvaluator(str(path))
        for v in values:
            s = np.array(v, np.int64 if which == "sizes" else np.float32)
            want = ref.run(None, {"x": x, "s": s})[0]
            got = model(x, s)[0]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{which} {v}")


@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression_at_run_time(tmp_path, center):
    # NonMaxSuppression of boxes and scores that are graph inputs (and its
    # limits too): the selected (batch, class, box) rows are a size the run
    # computes, bounded by every candidate; against ONNX's reference.
    onnx = pytest.importorskip("onnx")
    reference = pytest.importorskip("onnx.reference")
    h, T = onnx.helper, onnx.TensorProto
    batches, classes, n = 2, 3, 12
    graph = h.make_graph(
        [h.make_node("NonMaxSuppression", ["boxes", "scores", "m", "iou",
                                           "smin"], ["y"],
                     center_point_box=center)],
        "nms",
        [h.make_tensor_value_info("boxes", T.FLOAT, [batches, n, 4]),
         h.make_tensor_value_info("scores", T.FLOAT, [batches, classes, n]),
         h.make_tensor_value_info("m", T.INT64, [1]),
         h.make_tensor_value_info("iou", T.FLOAT, [1]),
         h.make_tensor_value_info("smin", T.FLOAT, [1])],
        [h.make_tensor_value_info("y", T.INT64, [None, 3])])
    path = _save(graph, tmp_path / "nms.onnx", 13)
    model = tcc.load(compile_model(path))
    ref = reference.ReferenceEvaluator(str(path))
    rng = np.random.default_rng(center)
    for trial in range(12):
        corners = rng.uniform(0, 10, (batches, n, 4)).astype(np.float32)
        if trial % 3 == 0:  # (ties: equal scores keep the lower index first)
            scores = rng.integers(0, 4, (batches, classes, n)) \
                .astype(np.float32) / 4
        else:
            scores = rng.uniform(0, 1, (batches, classes, n)) \
                .astype(np.float32)
        feeds = {"boxes": corners, "scores": scores,
                 "m": np.array([[0, 1, 3, 20][trial % 4]], np.int64),
                 "iou": np.array([[0.0, 0.3, 0.5, 0.9][trial % 4]],
                                 np.float32),
                 "smin": np.array([[-1.0, 0.2, 0.5][trial % 3]], np.float32)}
        want = ref.run(None, feeds)[0]
        got = model(*feeds.values())[0]
        np.testing.assert_array_equal(got, want.reshape(-1, 3),
                                      err_msg=f"trial {trial}")


def test_top_k_at_run_time(tmp_path):
    # TopK whose k is a graph input: every element sorted, values and
    # indices cut to k (one size the run computes, bounded by the axis);
    # against NumPy, ties keeping the lower index first.
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)], "topk",
        [h.make_tensor_value_info("x", T.FLOAT, [3, 6]),
         h.make_tensor_value_info("k", T.INT64, [1])],
        [h.make_tensor_value_info("v", T.FLOAT, [3, None]),
         h.make_tensor_value_info("i", T.INT64, [3, None])])
    model = tcc.load(compile_model(_save(graph, tmp_path / "topk.onnx")))
    x = np.array([[3, 1, 4, 1, 5, 9], [2, 6, 5, 3, 5, 8], [9, 7, 9, 3, 2, 3]],
                 np.float32)
    order = np.argsort(-x, axis=1, kind="stable")
    for k in (0, 1, 4, 6):
        v, i = model(x, np.array([k], np.int64))
        np.testing.assert_array_equal(i, order[:, :k], err_msg=f"k={k}")
        np.testing.assert_array_equal(
            v, np.take_along_axis(x, order[:, :k], 1), err_msg=f"k={k}")
    with pytest.raises(Exception, match=r"the size v the run computed from "
                       r"its inputs is 7, outside 0\.\.6"):
        model(x, np.array([7], np.int64))


@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique_at_run_time(tmp_path, sorted_):
    # Unique of a graph input: the unique elements, their first indices and
    # counts are one size the run computes (bounded by the elements), the
    # inverse indices one per element; against NumPy (ONNX's definition:
    # sorted, or in the order of first occurrence).
    onnx = pytest.importorskip("onnx")
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"],
                     sorted=sorted_)], "unique",
        [h.make_tensor_value_info("x", T.FLOAT, [3, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [None]),
         h.make_tensor_value_info("indices", T.INT64, [None]),
         h.make_tensor_value_info("inverse", T.INT64, [12]),
         h.make_tensor_value_info("counts", T.INT64, [None])])
    model = tcc.load(compile_model(_save(graph, tmp_path / "unique.onnx")))

    def expected(x):
        y, first, inverse, counts = np.unique(
            x.reshape(-1), return_index=True, return_inverse=True,
            return_counts=True)
        if not sorted_:
            by_first = np.argsort(first, kind="stable")
            rank = np.argsort(by_first)
            y, first, counts = y[by_first], first[by_first], counts[by_first]
            inverse = rank[inverse]
        return y, first, inverse.reshape(-1), counts

    rng = np.random.default_rng(sorted_)
    for x in (rng.integers(0, 4, (3, 4)).astype(np.float32),
              rng.integers(-50, 50, (3, 4)).astype(np.float32),
              np.full((3, 4), 2.5, np.float32),
              np.arange(12, 0, -1, dtype=np.float32).reshape(3, 4)):
        for name, g, w in zip(("y", "indices", "inverse", "counts"),
                              model(x), expected(x)):
            np.testing.assert_array_equal(g, w, err_msg=f"{name} of {x}")
