"""The tracer's training examples against PyTorch.

models/train_mlp.cpp and models/train_cnn.cpp train on synthetic data twice
-- define-by-run, and as one traced step (forward, backward and optimizer
update in one artifact) -- and write their initial parameters, data, losses
and final parameters as .npy. The same model, started from the same
parameters, is trained here with torch.optim on the same batches; losses and
parameters must agree.

Tolerances: both sides compute in float32 with different summation orders
(tcc's GEMM kernels block K differently from MKL/OpenBLAS), and training
amplifies rounding differences step by step, so after 20 steps parameters
are compared at atol 2e-4 + rtol 1e-3 and each step's loss at rtol 1e-3.
The two tcc runs are the same ops compiled in two graphs: they agree to 1e-5.
"""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch

BIN_DIR = pathlib.Path(os.environ.get("TCC_BIN_DIR", "build/bin"))
STEPS = 20


def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10))


def cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16 * 4 * 4, 10))


def run_example(name, optimizer, out):
    exe = BIN_DIR / f"tcc-train-{name}"
    assert exe.is_file(), f"{exe} not found (set TCC_BIN_DIR)"
    r = subprocess.run([str(exe), "--steps", str(STEPS), "--optimizer", optimizer,
                        "--out", str(out), "--threads", "2"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def torch_run(model, optimizer, out):
    params = list(model.parameters())
    with torch.no_grad():
        for i, p in enumerate(params):
            p.copy_(torch.from_numpy(np.load(out / f"init_param{i}.npy")))
    if optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    else:
        opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                                weight_decay=1e-2)
    batches = len(list(out.glob("x*.npy")))
    xs = [torch.from_numpy(np.load(out / f"x{b}.npy")) for b in range(batches)]
    ys = [torch.from_numpy(np.load(out / f"y{b}.npy")) for b in range(batches)]
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xs[step % batches]), ys[step % batches])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), [p.detach().numpy() for p in params]


@pytest.mark.parametrize("name,make,optimizer", [
    ("mlp", mlp, "sgd"), ("mlp", mlp, "adamw"), ("cnn", cnn, "sgd")])
def test_training_matches_pytorch(tmp_path, name, make, optimizer):
    summary = run_example(name, optimizer, tmp_path)
    torch.manual_seed(0)
    ref_losses, ref_params = torch_run(make(), optimizer, tmp_path)
    assert ref_losses[-1] < ref_losses[0]
    for mode in ("eager", "traced"):
        losses = np.load(tmp_path / f"{mode}_losses.npy")
        assert losses.shape == (STEPS,)
        assert losses[-1] < losses[0], f"{mode}: the loss did not fall: {losses}"
        np.testing.assert_allclose(losses, ref_losses, rtol=1e-3, atol=1e-5,
                                   err_msg=f"{mode} losses")
        for i, ref in enumerate(ref_params):
            got = np.load(tmp_path / f"{mode}_param{i}.npy")
            np.testing.assert_allclose(got, ref, rtol=1e-3, atol=2e-4,
                                       err_msg=f"{mode} parameter {i}")
    for i in range(len(ref_params)):
        np.testing.assert_allclose(np.load(tmp_path / f"eager_param{i}.npy"),
                                   np.load(tmp_path / f"traced_param{i}.npy"),
                                   rtol=1e-5, atol=1e-5)
    assert summary["eager_last_loss"] < summary["eager_first_loss"]
    # The traced step was saved as tcc IR and as a library.
    assert (tmp_path / "step.so").is_file() and (tmp_path / "step.h").is_file()
    assert "tcc.matmul" in (tmp_path / "step.mlir").read_text()
