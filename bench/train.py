#!/usr/bin/env python3
"""Training-step speed: tcc's tracer against PyTorch eager and torch.compile.

For each model (the MLP 784-512-256-10 at batch 64, and the small CNN of
models/train_cnn.cpp at batch 32), one run measures side by side:

  tcc define-by-run   the ordinary C++ loop (models/train_*.cpp): recording,
                      the cache lookup and the compiled step, every step
  tcc traced          the same step captured once by tcc::trace and called
  PyTorch eager       zero_grad, forward, cross_entropy, backward, SGD step
  torch.compile       the same with the model compiled (Inductor; backward
                      through AOTAutograd)

Each is the median time of a step after warm-up steps (compilation
excluded), with the same number of threads. Ratios are PyTorch's time over
tcc's (above 1: tcc is faster).

    bench/train.py [--steps 50] [--threads 2] [--bin-dir build/bin] [--markdown]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def torch_models(torch):
    nn = torch.nn
    return {
        "mlp": (lambda: nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256),
                                      nn.ReLU(), nn.Linear(256, 10)), (64, 784)),
        "cnn": (lambda: nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(256, 10)), (32, 1, 16, 16)),
    }


def time_torch(torch, make, shape, steps, compiled):
    torch.manual_seed(0)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(*shape)
    y = torch.randint(0, 10, (shape[0],))
    forward = torch.compile(model) if compiled else model

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(forward(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(5):  # warm-up (and compilation)
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def time_tcc(bin_dir, name, steps, threads):
    exe = pathlib.Path(bin_dir) / f"tcc-train-{name}"
    r = subprocess.run([str(exe), "--steps", str(steps + 3), "--threads", str(threads)],
                       capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        sys.exit(f"{exe} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bin-dir", default=str(ROOT / "build" / "bin"))
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    models = torch_models(torch)
    rows = []
    for name in args.models.split(","):
        make, shape = models[name]
        t = time_tcc(args.bin_dir, name, args.steps, args.threads)
        eager = time_torch(torch, make, shape, args.steps, compiled=False)
        inductor = None if args.no_compile else time_torch(torch, make, shape, args.steps,
                                                          compiled=True)
        rows.append({"model": name, "tcc_define_by_run_ms": t["eager_ms_per_step"],
                     "tcc_traced_ms": t["traced_ms_per_step"], "torch_eager_ms": eager,
                     "torch_compile_ms": inductor, "tcc_compiles": t["compiles"],
                     "tcc_compile_seconds": t["compile_seconds"]})

    best = lambda r: min(r["tcc_define_by_run_ms"], r["tcc_traced_ms"])
    ratio = lambda a, b: f"{a / b:.2f}x" if a else "-"
    fmt = lambda v: f"{v:.3f}" if v is not None else "-"
    header = ["model", "tcc define-by-run ms", "tcc traced ms", "PyTorch eager ms",
              "torch.compile ms", "eager / tcc", "compile / tcc", "tcc compile s"]
    lines = []
    for r in rows:
        lines.append([r["model"], fmt(r["tcc_define_by_run_ms"]), fmt(r["tcc_traced_ms"]),
                      fmt(r["torch_eager_ms"]), fmt(r["torch_compile_ms"]),
                      ratio(r["torch_eager_ms"], best(r)),
                      ratio(r["torch_compile_ms"], best(r)) if r["torch_compile_ms"] else "-",
                      f"{r['tcc_compile_seconds']:.2f}"])
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(header)]
        print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
        for l in lines:
            print("  ".join(c.rjust(w) for c, w in zip(l, widths)))
    print(f"(median ms per training step, {args.threads} threads, {args.steps} steps; "
          f"ratios use tcc's faster mode)")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
