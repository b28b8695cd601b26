"""tcc.torch.export: torch.export to an artifact that tcc-run and the C
ABI run with no Python or torch; compile_exported loads it."""

import os
import subprocess

import numpy as np
import pytest
import torch

from models import CNN, GPT, MLP

import tcc
import tcc.torch

torchvision = pytest.importorskip("torchvision")


def tcc_run():
    return os.path.join(os.environ["TCC_BIN_DIR"], "tcc-run")


def write_set(folder, inputs, outputs):
    os.makedirs(folder)
    for i, x in enumerate(inputs):
        np.save(os.path.join(folder, f"input_{i}.npy"), x.numpy())
    for i, y in enumerate(outputs):
        np.save(os.path.join(folder, f"output_{i}.npy"), y.detach().numpy())


def test_resnet18_runs_under_tcc_run(tmp_path):
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 64, 64)
    so = str(tmp_path / "resnet18.so")
    tcc.torch.export(model, (x,), so)
    with torch.no_grad():
        expected = model(x)
    write_set(str(tmp_path / "set"), [x], [expected])
    out = subprocess.run([tcc_run(), so, "--inputs", str(tmp_path / "set"),
                          "--check", "--rtol", "1e-4", "--atol", "1e-5"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS" in out.stdout or "passed" in out.stdout.lower()


def test_header_compiles_in_c(tmp_path):
    so = str(tmp_path / "mlp.so")
    tcc.torch.export(MLP(), (torch.randn(4, 32),), so)
    (tmp_path / "use.c").write_text('#include "mlp.h"\nint main(void) { return 0; }\n')
    out = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror",
                          "-fsyntax-only", "-I", str(tmp_path),
                          str(tmp_path / "use.c")], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    header = (tmp_path / "mlp.h").read_text()
    assert "mlp_run" in header


def test_compile_exported_matches_eager():
    model = GPT().eval()
    ids = torch.randint(0, 97, (1, 16))
    ep = torch.export.export(model, (ids,))
    compiled = tcc.torch.compile_exported(ep)
    with torch.no_grad():
        expected = model(ids).numpy()
    (got,) = compiled(ids.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_training_mode_export_is_refused():
    # Batch norm in training mode writes its running statistics: no place
    # for that in an inference artifact.
    ep = torch.export.export(CNN().train(), (torch.randn(2, 3, 16, 16),))
    with pytest.raises(tcc.torch.Unsupported) as e:
        tcc.torch.compile_exported(ep)
    assert "mutates 'bn1.running_mean'" in str(e.value)
