"""What the e2e tests of exported torch modules share: the module exported
to ONNX with the zoo's exporter settings, tcc's IR at a stage, and the
module compiled and run by tcc beside PyTorch."""

import os
import subprocess
import sys

import numpy as np
import torch

import tcc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "models"))
import make_models  # noqa: E402

TCC = os.path.join(os.environ["TCC_BIN_DIR"], "tcc")


def export(model, x, tmp_path):
    """`model` on input `x` as an ONNX file in tmp_path."""
    path = tmp_path / "model.onnx"
    make_models.export_onnx(model, [x.numpy()], path)
    return path


def emit(path, stage):
    """tcc's output for `--emit=stage` (it must compile)."""
    r = subprocess.run([TCC, str(path), f"--emit={stage}", "-o", "-"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def check_against_torch(model, x, path, tmp_path, rtol, atol):
    """Compiles `path`, runs it on `x` and compares with `model(x)`."""
    so = tmp_path / "model.so"
    r = subprocess.run([TCC, str(path), "-o", str(so)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    got = tcc.load(str(so))(x.numpy())[0]
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
