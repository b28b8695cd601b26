#!/usr/bin/env python3
"""Dynamic dimensions against static artifacts: the cost of compiling once.

For resnet18 (1x3x224x224 per image) and the encoder layer (sequence 128),
exported to ONNX with a symbolic batch, and the encoder and the GPT-style
decoder block (its causal mask built from the run's length; batch 1)
exported with a symbolic sequence length, tcc compiles one dynamic artifact
(`--dim batch=1..64`: slabs; `--dim seq=1..128`: padded buckets) and one
static artifact per size timed; `tcc-run DYNAMIC --compare STATIC --bench
N` then runs the two in turn on the same inputs (paired runs, one
process), and ONNX Runtime runs the dynamic ONNX model on the same inputs
beside them. Prints per size: tcc static ms, tcc dynamic ms, the median
over paired runs of static / dynamic (below 1: the dynamic artifact is
slower), the dynamic artifact's ms per image (batch) or per token
(sequence, both: per batch row's token), and ONNX Runtime's ms. `--only
NAME` runs the cases whose name contains NAME.

    PY=~/.cache/tcc/venv/bin/python
    $PY bench/dynamic.py --threads 2 --runs 30 --markdown
"""

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "models"))


def export(model, example, path, dims=None):
    import torch
    if dims is None:
        dims = {0: torch.export.Dim("batch", min=1, max=64)}
    with contextlib.redirect_stdout(io.StringIO()):
        prog = torch.onnx.export(
            model.eval(), example, dynamo=True, optimize=True,
            opset_version=18, input_names=["x"], output_names=["y"],
            dynamic_shapes=(dims,), external_data=False)
    prog.save(str(path), external_data=False)


def build_models(out: Path, batches, seqs):
    """(name, ONNX model, tcc flags, what varies, [(size, input shape)])."""
    import torch
    import torchvision
    import make_models
    torch.manual_seed(0)
    cases = []
    for name, model, row in [
            ("resnet18", torchvision.models.resnet18().eval(), (3, 224, 224)),
            ("encoder (seq 128)", make_models._build_encoder().eval(),
             (128, 768))]:
        path = out / (name.split()[0] + ".onnx")
        export(model, (torch.randn(2, *row),), path)
        cases.append((name, path, ["--dim", "batch=1..64"], "batch",
                      [(b, (b, *row)) for b in batches]))
    path = out / "encoder_seq.onnx"
    export(make_models._build_encoder().eval(), (torch.randn(1, 16, 768),),
           path, {1: torch.export.Dim("seq", min=1, max=128)})
    cases.append(("encoder (batch 1)", path, ["--dim", "seq=1..128"],
                  "sequence", [(s, (1, s, 768)) for s in seqs]))
    path = out / "decoder_seq.onnx"
    export(make_models._build_decoder().eval(), (torch.randn(1, 16, 768),),
           path, {1: torch.export.Dim("seq", min=1, max=128)})
    cases.append(("decoder (causal mask)", path, ["--dim", "seq=1..128"],
                  "sequence", [(s, (1, s, 768)) for s in seqs]))
    path = out / "encoder_both.onnx"
    export(make_models._build_encoder().eval(), (torch.randn(2, 16, 768),),
           path, {0: torch.export.Dim("batch", min=1, max=8),
                  1: torch.export.Dim("seq", min=1, max=128)})
    cases.append(("encoder (batch and sequence)", path,
                  ["--dim", "batch=1..8", "--dim", "seq=1..128"],
                  "batch x sequence", [((b, s), (b, s, 768))
                                       for b, s in ((4, 77), (8, 128))]))
    return cases


def compile_model(tcc, onnx, so, *flags):
    subprocess.run([tcc, str(onnx), "-o", str(so), *flags], check=True)


def tcc_run_compare(tcc_run, dynamic, static, inputs, runs, warmup, threads):
    r = subprocess.run([tcc_run, str(dynamic), "--inputs", str(inputs),
                        "--compare", str(static), "--bench", str(runs),
                        "--warmup", str(warmup), "--threads", str(threads),
                        "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(r.stdout + r.stderr)
    s = json.loads(r.stdout)["sets"][0]
    return (s["bench"]["median_ms"], s["compare"]["median_ms"],
            s["compare"]["median_ratio"])


def ort_ms(onnx, x, runs, warmup, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    s = ort.InferenceSession(str(onnx), opts,
                             providers=["CPUExecutionProvider"])
    for _ in range(warmup):
        s.run(None, {"x": x})
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, {"x": x})
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin-dir", default=str(ROOT / "build" / "bin"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--seqs", default="16,77,128")
    ap.add_argument("--only", default="",
                    help="run the cases whose name contains this")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    tcc = os.path.join(a.bin_dir, "tcc")
    tcc_run = os.path.join(a.bin_dir, "tcc-run")
    batches = [int(b) for b in a.batches.split(",")]
    seqs = [int(s) for s in a.seqs.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tcc-dyn-") as tmp:
        tmp = Path(tmp)
        for name, onnx, flags, what, sizes in build_models(tmp, batches,
                                                           seqs):
            if a.only not in name:
                continue
            stem = onnx.stem
            dynamic = tmp / f"{stem}_dyn.so"
            t = time.perf_counter()
            compile_model(tcc, onnx, dynamic, *flags)
            dyn_s = time.perf_counter() - t
            for size, shape in sizes:
                label = "x".join(map(str, size)) \
                    if isinstance(size, tuple) else str(size)
                static = tmp / f"{stem}_{label}.so"
                t = time.perf_counter()
                compile_model(tcc, onnx, static, "--input-shape",
                              f"x={'x'.join(str(d) for d in shape)}")
                static_s = time.perf_counter() - t
                inputs = tmp / f"{stem}_in{label}"
                inputs.mkdir()
                x = np.random.default_rng(shape[0] * shape[1]).standard_normal(
                    shape).astype(np.float32)
                np.save(inputs / "input_0.npy", x)
                dyn_ms, static_ms, ratio = tcc_run_compare(
                    tcc_run, dynamic, static, inputs, a.runs, a.warmup,
                    a.threads)
                ort = ort_ms(onnx, x, a.runs, a.warmup, a.threads)
                units = size[0] * size[1] if isinstance(size, tuple) else size
                rows.append((name, what, label, units, static_ms, dyn_ms,
                             ratio, ort, static_s, dyn_s))
                print(f"{name} {what} {label}: static {static_ms:.3f} ms, "
                      f"dynamic {dyn_ms:.3f} ms (static/dynamic {ratio:.3f}),"
                      f" ORT {ort:.3f} ms; compile static {static_s:.1f} s,"
                      f" dynamic {dyn_s:.1f} s", file=sys.stderr)
    if a.markdown:
        print("| model | size | tcc static ms | tcc dynamic ms | static / "
              "dynamic (paired) | dynamic ms per image or token | ONNX "
              "Runtime ms (dynamic model) | compile s: static / dynamic |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, what, label, n, s, d, r, o, cs, cd in rows:
            print(f"| {name} | {what} {label} | {s:.3f} | {d:.3f} | "
                  f"{r:.3f} | {d / n:.3f} | {o:.3f} | {cs:.1f} / {cd:.1f} |")


if __name__ == "__main__":
    main()
