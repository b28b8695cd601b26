"""End-to-end model tests: compile each model with tcc and check it with tcc-run.

Environment:
  TCC_BIN_DIR     folder holding tcc and tcc-run (default: <repo>/build/bin)
  TCC_MODELS_DIR  folder written by models/make_models.py (default: <repo>/build/models)

For every model: `tcc model.onnx -o <tmp>/model.so`, then
`tcc-run <tmp>/model.so --inputs <dir>/test_data_set_0 --check --rtol 1e-3 --atol 1e-4`
must exit 0; for resnet18, mobilenet_v2 and the encoder, `tcc --kernel-stats
--memory-report=json` must meet the graph-optimisation targets
(test_memory_plan). A model is skipped only when its files are missing (the skip
message says which file and how to generate it); a missing tcc binary fails.

Run:  TCC_BIN_DIR=build/bin TCC_MODELS_DIR=build/models \
        /root/.cache/tcc/venv/bin/python -m pytest -v test/e2e
"""
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("TCC_BIN_DIR", REPO / "build" / "bin"))
MODELS_DIR = Path(os.environ.get("TCC_MODELS_DIR", REPO / "build" / "models"))
RTOL, ATOL = "1e-3", "1e-4"
COMPILE_TIMEOUT_S = 900
RUN_TIMEOUT_S = 300

MODELS = {
    "tiny_cnn": REPO / "models" / "tiny_cnn",
    "mlp": MODELS_DIR / "mlp",
    "resnet18": MODELS_DIR / "resnet18",
    "mobilenet_v2": MODELS_DIR / "mobilenet_v2",
    "encoder": MODELS_DIR / "encoder",
}
# A quick subset of the zoo (models/make_models.py --zoo; bench/run.py
# --models zoo runs and checks all of it): the families whose operators the
# core models lack (squeeze-and-excitation with SiLU or hard-swish, channel
# shuffles, fire modules' concats, grouped convolutions of 8 channels a
# group, a causal decoder, a short sequence).
ZOO_QUICK = ["squeezenet1_1", "shufflenet_v2_x1_0", "efficientnet_b0",
             "mobilenet_v3_large", "regnet_y_400mf", "cnn_b8", "encoder_s32",
             "decoder"]
MODELS.update({name: MODELS_DIR / name for name in ZOO_QUICK})


def _output(r: subprocess.CompletedProcess) -> str:
    return f"exit {r.returncode}\n--- stdout ---\n{r.stdout[-4000:]}\n--- stderr ---\n{r.stderr[-4000:]}"


# Besides the default build (the host's kernels), mobilenet_v2 with the AVX2
# kernels, where each depthwise/pointwise group is two kernel calls instead
# of one, and with no micro-kernels at all (the group's convolutions as
# linalg loops); the encoder with the AVX2 kernels (their GELU epilogue).
CASES = [(name, []) for name in MODELS] + [
    ("mobilenet_v2", ["--mcpu=haswell"]),
    ("mobilenet_v2", ["--ukernels=none"]),
    ("encoder", ["--mcpu=haswell"]),
] + [
    # The CUDA pipeline with its kernels run as loops on this CPU and the
    # device emulated by the runtime (docs/cuda.md): checks the mapping of
    # loops to threads and the cuBLAS calls without a GPU.
    (name, ["--target=cuda", "--cuda-arch=emulate"])
    for name in ["mlp", "resnet18", "mobilenet_v2", "encoder",
                 "efficientnet_b0", "decoder"]
]


@pytest.mark.parametrize("name,flags", CASES,
                         ids=[n + "".join(f.replace("--", "_").replace("=", "-")
                                          for f in fl) for n, fl in CASES])
def test_model(name, flags, tmp_path):
    model_dir = MODELS[name]
    case = model_dir / "test_data_set_0"
    for f in (model_dir / "model.onnx", case / "input_0.pb", case / "output_0.pb"):
        if not f.is_file():
            pytest.skip(f"{name}: missing {f} (generate it with "
                        f"models/make_models.py --out {MODELS_DIR} {name})")

    tcc, tcc_run = BIN_DIR / "tcc", BIN_DIR / "tcc-run"
    assert tcc.is_file(), f"tcc not found at {tcc} (set TCC_BIN_DIR)"
    assert tcc_run.is_file(), f"tcc-run not found at {tcc_run} (set TCC_BIN_DIR)"

    so = tmp_path / "model.so"
    r = subprocess.run([str(tcc), str(model_dir / "model.onnx"), *flags, "-o", str(so)],
                       capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    assert r.returncode == 0, f"tcc failed on {name}: {_output(r)}"
    assert so.is_file(), f"tcc exited 0 but wrote no {so}"

    r = subprocess.run([str(tcc_run), str(so), "--inputs", str(case),
                        "--check", "--rtol", RTOL, "--atol", ATOL],
                       capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert r.returncode == 0, f"tcc-run --check failed on {name}: {_output(r)}"


# The graph-optimisation targets on the real models: at least twice fewer
# kernels than ops after import, and an arena within 10% of the peak-live
# lower bound and at most 0.3 of naive (every intermediate its own buffer).
# Deterministic (no timing); docs/performance.md has the figures.
PLANNED = ["resnet18", "mobilenet_v2", "encoder"]


@pytest.mark.parametrize("name", PLANNED)
def test_memory_plan(name, tmp_path):
    import json
    model = MODELS[name] / "model.onnx"
    if not model.is_file():
        pytest.skip(f"{name}: missing {model} (generate it with "
                    f"models/make_models.py --out {MODELS_DIR} {name})")
    r = subprocess.run([str(BIN_DIR / "tcc"), str(model), "--kernel-stats",
                        "--memory-report=json", "-o", str(tmp_path / "m.so")],
                       capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    assert r.returncode == 0, f"tcc failed on {name}: {_output(r)}"
    lines = r.stdout.splitlines()
    counts = {l.split(":")[0]: int(l.split(":")[1]) for l in lines[:2]}
    plan = json.loads("\n".join(lines[2:]))
    ops, kernels = counts["ops after import"], counts["kernels after fusion"]
    assert ops >= 2 * kernels, f"{name}: {ops} ops, {kernels} kernels"
    arena, peak, naive = (plan[k] for k in ("arena_bytes", "peak_live_bytes",
                                            "naive_bytes"))
    assert peak <= arena <= 1.1 * peak, f"{name}: arena {arena}, peak {peak}"
    if name == "encoder":
        # Its attention is one kernel whose scores never become tensors, so
        # naive no longer counts the scores and the probabilities (2 x 2
        # activations) while the peak is the FFN's: its input and hidden
        # layer (5 activations of 128 x 768), and the FFN down's scratch,
        # the hidden layer packed whole as the product's A (4 more, and 64
        # bytes of alignment): its prepacked weights go a panel at a time
        # through every row panel (docs/ukernels.md), 13% faster.
        assert arena <= 9 * 128 * 768 * 4 + 64, f"{name}: arena {arena}"
    else:
        assert arena <= 0.3 * naive, f"{name}: arena {arena}, naive {naive}"
