#!/usr/bin/env python3
"""Generate models/tiny_cnn, the one small model committed to the repository.

    Conv(1->8, 3x3, pad 1) + BatchNorm + ReLU + MaxPool 2x2
    Conv(8->16, 3x3, pad 1) + ReLU + GlobalAveragePool
    Flatten + Linear(16->10) + Softmax

Input float32 [1, 1, 28, 28]; output float32 [1, 10]. Fixed seed, random
weights, PyTorch float32 CPU reference output, verified with ONNX Runtime.
Exporter settings are shared with make_models.py (see its docstring).

Usage:  make_tiny_cnn.py [--out models/tiny_cnn] [--force]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # keep models/ free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_models as mm  # noqa: E402

SEED = 2024
INPUT_SHAPE = (1, 1, 28, 28)
DEFAULT_OUT = Path(__file__).resolve().parent / "tiny_cnn"


def build_model():
    """Deterministic eval-mode tiny CNN (also used by bench/run.py)."""
    torch = mm._torch()
    nn = torch.nn
    torch.manual_seed(SEED)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
        nn.Softmax(dim=-1),
    )
    mm._randomize_params(model, torch.Generator().manual_seed(SEED + 1))
    return model.eval()


def make_inputs():
    return mm.make_inputs("tiny_cnn", shapes=[INPUT_SHAPE], seed=SEED)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    scripts = (Path(__file__).resolve(), mm.SCRIPT)
    if not a.force and mm.up_to_date(a.out, scripts):
        print(f"[make_tiny_cnn] up to date ({a.out})")
        return 0
    mm.generate("tiny_cnn", build_model(), make_inputs(), a.out)
    print(f"[make_tiny_cnn] wrote {a.out} ({mm.op_summary(a.out / 'model.onnx')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
