"""TorchScript files: `tcc model.pt --input-shape ... -o model.so` and
tcc.compile("model.pt", input_shapes=...). Each model runs under
`tcc-run --check` against torch's own outputs (rtol 1e-4, atol 1e-5: f32
products summed in another order). Hostile files get one error line,
exit 1, and no output file; nothing in them runs."""

import os
import pickle
import subprocess
import warnings
import zipfile

import numpy as np
import pytest
import torch

import tcc

torchvision = pytest.importorskip("torchvision")

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit's deprecation notices
        yield


def tool(name):
    return os.path.join(os.environ["TCC_BIN_DIR"], name)


def run_tcc(*args, env=None):
    return subprocess.run([tool("tcc"), *map(str, args)], capture_output=True,
                          text=True, env=env)


def check_with_tcc_run(so, inputs, outputs, folder):
    os.makedirs(folder)
    for i, x in enumerate(inputs):
        np.save(os.path.join(folder, f"input_{i}.npy"), x.numpy())
    for i, y in enumerate(outputs):
        np.save(os.path.join(folder, f"output_{i}.npy"), y.detach().numpy())
    out = subprocess.run([tool("tcc-run"), so, "--inputs", folder, "--check",
                          "--rtol", str(RTOL), "--atol", str(ATOL)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def flat(outputs):
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    return [t for o in outputs for t in flat(o)]


class Branchy(torch.nn.Module):
    """An `if` on a constant attribute, a loop with a constant trip count,
    and a tuple holding a list among its outputs."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 6)
        self.scale = True
        self.steps = 3

    def forward(self, x):
        y = self.fc(x)
        if self.scale:
            y = y * 0.5
        for _ in range(self.steps):
            y = torch.tanh(y) + y
        return y, [y.sum(1), torch.relu(y).mean(0)]


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


class IntArgument(torch.nn.Module):
    def forward(self, x, n: int):
        return x * n


@pytest.mark.parametrize("how", ["trace", "script"])
def test_resnet18(tmp_path, how):
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 64, 64)
    ts = torch.jit.trace(model, x) if how == "trace" else \
        torch.jit.script(model)
    ts.save(str(tmp_path / "resnet18.pt"))
    so = tmp_path / "resnet18.so"
    out = run_tcc(tmp_path / "resnet18.pt", "--input-shape", "x=1x3x64x64",
                  "-o", so)
    assert out.returncode == 0, out.stderr
    with torch.no_grad():
        expected = model(x)
    check_with_tcc_run(str(so), [x], [expected], str(tmp_path / "set"))


@pytest.mark.parametrize("how", ["trace", "script"])
def test_constant_control_flow_and_nested_outputs(tmp_path, how):
    model = Branchy().eval()
    x = torch.randn(4, 8)
    ts = torch.jit.trace(model, x, strict=False) if how == "trace" else \
        torch.jit.script(model)
    ts.save(str(tmp_path / "branchy.pt"))
    so = tmp_path / "branchy.so"
    out = run_tcc(tmp_path / "branchy.pt", "--input-shape", "x=4x8", "-o", so)
    assert out.returncode == 0, out.stderr
    with torch.no_grad():
        expected = flat(model(x))
    assert len(expected) == 3
    check_with_tcc_run(str(so), [x], expected, str(tmp_path / "set"))


def test_emit_import_names_the_inputs(tmp_path):
    torch.jit.script(Branchy().eval()).save(str(tmp_path / "b.pt"))
    out = run_tcc(tmp_path / "b.pt", "--input-shape", "x=2x8",
                  "--emit=import")
    assert out.returncode == 0, out.stderr
    assert 'tcc.model_name = "b"' in out.stdout
    assert 'tensor<2x8xf32> {tcc.name = "x"}' in out.stdout


def test_python_compile(tmp_path):
    model = Branchy().eval()
    torch.jit.script(model).save(str(tmp_path / "b.pt"))
    x = torch.randn(5, 8)
    compiled = tcc.compile(str(tmp_path / "b.pt"), input_shapes={"x": [5, 8]})
    got = compiled(x.numpy())
    with torch.no_grad():
        expected = flat(model(x))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=RTOL, atol=ATOL)


def test_python_compile_error_is_a_compile_error(tmp_path):
    torch.jit.script(Branchy()).save(str(tmp_path / "b.pt"))
    with pytest.raises(tcc.CompileError, match="input 'x' has no shape"):
        tcc.compile(str(tmp_path / "b.pt"))


def one_error(out, *needles, output=None):
    """Exit 1, one diagnostic line holding every needle, no output."""
    assert out.returncode == 1, out.stdout + out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: "), out.stderr
    for needle in needles:
        assert needle in lines[0], out.stderr
    if output is not None:
        assert not os.path.exists(output)


@pytest.fixture
def branchy_pt(tmp_path):
    path = tmp_path / "branchy.pt"
    torch.jit.script(Branchy().eval()).save(str(path))
    return path


def test_missing_shape_names_the_input(tmp_path, branchy_pt):
    so = tmp_path / "o.so"
    one_error(run_tcc(branchy_pt, "-o", so), "input 'x' has no shape",
              "--input-shape x=", output=so)


def test_unknown_input_name(tmp_path, branchy_pt):
    so = tmp_path / "o.so"
    one_error(run_tcc(branchy_pt, "--input-shape", "y=2x8", "-o", so),
              "'y'", "its inputs: x", output=so)


def test_non_tensor_input(tmp_path):
    torch.jit.script(IntArgument()).save(str(tmp_path / "i.pt"))
    so = tmp_path / "o.so"
    one_error(run_tcc(tmp_path / "i.pt", "--input-shape", "x=2", "-o", so),
              "input 'n'", "int", output=so)


def test_data_dependent_if_names_its_source_line(tmp_path):
    torch.jit.script(DataDependent()).save(str(tmp_path / "d.pt"))
    so = tmp_path / "o.so"
    one_error(run_tcc(tmp_path / "d.pt", "--input-shape", "x=2x3", "-o", so),
              "control flow on a tensor's value", "test_torchscript.py",
              "if x.sum() > 0:", output=so)


def test_truncated_archive(tmp_path, branchy_pt):
    data = branchy_pt.read_bytes()
    (tmp_path / "t.pt").write_bytes(data[:len(data) // 2])
    so = tmp_path / "o.so"
    one_error(run_tcc(tmp_path / "t.pt", "--input-shape", "x=2x8", "-o", so),
              "t.pt", "not a TorchScript file", output=so)


def test_a_state_dict_is_not_a_program(tmp_path):
    torch.save(torch.nn.Linear(2, 2).state_dict(), str(tmp_path / "s.pt"))
    so = tmp_path / "o.so"
    one_error(run_tcc(tmp_path / "s.pt", "--input-shape", "x=2", "-o", so),
              "no TorchScript program", output=so)


def test_not_a_zip(tmp_path):
    (tmp_path / "n.pt").write_text("not a model\n")
    one_error(run_tcc(tmp_path / "n.pt", "--input-shape", "x=2", "-o",
                      tmp_path / "o.so"), "not a TorchScript file")


def test_missing_file(tmp_path):
    one_error(run_tcc(tmp_path / "absent.pt", "--input-shape", "x=2", "-o",
                      tmp_path / "o.so"), "absent.pt: no such file")


class _Payload:
    """Unpickled by a permissive loader, this would run a shell command."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_with_arbitrary_globals_runs_nothing(tmp_path, branchy_pt):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pt"
    with zipfile.ZipFile(branchy_pt) as src, zipfile.ZipFile(evil, "w") as z:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("/data.pkl"):
                data = pickle.dumps(_Payload(marker), protocol=2)
            z.writestr(name, data)
    so = tmp_path / "o.so"
    one_error(run_tcc(evil, "--input-shape", "x=2x8", "-o", so),
              "torch.jit.load cannot read it", output=so)
    assert not marker.exists()


def test_without_torch_one_line_says_what_to_install(tmp_path, branchy_pt):
    """tcc's Python without torch: a `torch` package that cannot be
    imported shadows the real one."""
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ImportError(\"No module named 'torch'\")\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "shadow"))
    one_error(run_tcc(branchy_pt, "--input-shape", "x=2x8", "-o",
                      tmp_path / "o.so", env=env),
              "needs PyTorch", "pip install torch", output=tmp_path / "o.so")


CORPUS = os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus",
                      "torchscript")


@pytest.mark.parametrize("name", sorted(os.listdir(CORPUS)))
def test_fuzz_findings_are_one_diagnostic(tmp_path, name):
    """Archives the TorchScript fuzzer found (test/fuzz/corpus/torchscript):
    a zip of a version Python's zipfile does not know, and files on which
    torch's own loader aborts (printing a C++ stack trace) or segfaults,
    which tcc reads in a child process. Each is one error line."""
    so = tmp_path / "o.so"
    out = run_tcc(os.path.join(CORPUS, name), "--input-shape", "x=2x6",
                  "-o", so)
    one_error(out, name, output=so)
    assert "frame #" not in out.stderr


def test_python_compile_survives_a_crashing_loader():
    """tcc.compile imports TorchScript in a child process too: torch's
    loader crashing on a file is an exception here, not the end of the
    calling process."""
    with pytest.raises(tcc.CompileError, match="crashed reading it"):
        tcc.compile(os.path.join(CORPUS, "loader-segfault.pt"),
                    input_shapes={"x": [2, 6]})
