#!/usr/bin/env python3
"""torch.compile backends side by side: backend="tcc", Inductor and eager.

The same PyTorch modules, the same inputs and threads, one run. Three
tables:

  inference   every bench model (models/make_models.py: mlp, resnet18,
              mobilenet_v2, encoder), median ms per call under
              torch.inference_mode(), each engine's output checked against
              the PyTorch reference of bench/run.py (rtol 1e-3, atol 1e-4)
  training    one SGD step (momentum 0.9): zero_grad, forward and
              cross-entropy loss (the compiled module holds both), backward,
              optimizer step, for an MLP (784-512-256-10, batch 64), a CNN
              (two conv+pool, batch 32) and a transformer classifier
              (nn.TransformerEncoderLayer d=128, 4 heads, batch 16 x 32
              tokens). The first step's loss is checked against eager's
              (rtol 1e-4).
  overhead    one call of a compiled `x + 1` on a one-element tensor: what
              a compiled graph costs beyond its kernels (Dynamo's guards,
              AOTAutograd's wrappers, the backend's call path); for tcc
              also the call of the graph the backend returned, alone

Compile times: `cold` is the first call in a process with empty caches
(tcc's artifact cache, Inductor's cache dir); `warm` is the first call in a
second process that finds the first one's caches (Dynamo traces again in
both, for every backend).

As bench/run.py: each (engine, workload) runs in its own process; after
every engine is set up, the engines take turns in --rounds rounds of
--warmup + --runs calls; an engine's figure is the median of its rounds'
medians, and a ratio is the median over the rounds of peer / tcc in the
same round (>1: tcc is faster).

  bench/torch_compile.py                        # everything, 2 threads
  bench/torch_compile.py --infer resnet18 --train none --no-warm
  bench/torch_compile.py --smoke                # CI: tiny workloads, tcc and eager
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the shared harness of bench/run.py)

ENGINES = ["tcc", "inductor", "eager"]
INFER = ["mlp", "resnet18", "mobilenet_v2", "encoder"]
TRAIN = ["mlp", "cnn", "transformer"]
LOSS_RTOL = 1e-4


# --------------------------------------------------------------------------- #
# Workloads (worker side)
# --------------------------------------------------------------------------- #

def training_model(torch, name):
    """(module, input, labels) of a training workload, seeded."""
    nn = torch.nn
    torch.manual_seed(0)
    if name == "mlp":
        m = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256),
                          nn.ReLU(), nn.Linear(256, 10))
        x = torch.randn(64, 784)
    elif name == "cnn":
        m = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(256, 10))
        x = torch.randn(32, 1, 16, 16)
    elif name == "transformer":
        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0,
                                                        batch_first=True)
                self.head = nn.Linear(128, 10)

            def forward(self, x):
                return self.head(self.layer(x).mean(dim=1))
        m = Classifier()
        x = torch.randn(16, 32, 128)
    else:
        raise ValueError(f"unknown training workload '{name}' (known: {', '.join(TRAIN)})")
    return m, x, torch.randint(0, 10, (x.shape[0],))


def _compiled(torch, engine, module, a):
    torch._dynamo.reset()
    if engine == "tcc":
        import tcc.torch  # noqa: F401  (registers the backend)
        return torch.compile(module, backend="tcc", dynamic=False,
                             options={"threads": a.threads})
    if engine == "inductor":
        return torch.compile(module, dynamic=False)
    return module


def setup_infer(torch, engine, a):
    mdir, why = run.prepare_models([a.name], a.cache)[a.name]
    if mdir is None:
        raise RuntimeError(why)
    inputs, refs = run.load_case(mdir)
    model = run.torch_module(a.name)
    xs = [torch.from_numpy(x) for x in inputs]
    f = _compiled(torch, engine, model, a)

    def call():
        with torch.inference_mode():
            return f(*xs)

    def check(out):
        return run.check_outputs(run._as_list(out), refs)
    return call, check


def setup_train(torch, engine, a):
    model, x, y = training_model(torch, a.name)

    class WithLoss(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x, y):
            return torch.nn.functional.cross_entropy(self.m(x), y)
    ref = WithLoss(copy.deepcopy(model))(x, y).item()
    step_fn = _compiled(torch, engine, WithLoss(model), a)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    first = []

    def step():
        opt.zero_grad()
        loss = step_fn(x, y)
        loss.backward()
        opt.step()
        if not first:
            first.append(loss.item())
        return loss

    def check(_):
        got = first[0]
        ok = abs(got - ref) <= LOSS_RTOL * abs(ref)
        return {"check": "pass" if ok else "fail",
                "check_detail": f"first loss {got:.6g}, eager {ref:.6g}"}
    return step, check


def setup_overhead(torch, engine, a):
    """For tcc, `check` also times the compiled graph's own call (what the
    backend returned, without Dynamo's and AOTAutograd's wrappers)."""
    x = torch.ones(1)
    graphs = []
    if engine == "tcc":
        import tcc.torch  # noqa: F401
        backend = sys.modules["tcc.torch.backend"]  # the module, not the function
        load = backend.CompiledGraph._load

        def grab(self, path):  # notes the graph the backend compiled
            graphs.append(self)
            return load(self, path)
        backend.CompiledGraph._load = grab
    f = _compiled(torch, engine, lambda t: t + 1, a)

    def check(out):
        res = {"check": "pass" if out.shape == (1,) and float(out[0]) == 2.0
               else "fail"}
        if graphs:
            times = []
            for _ in range(5):
                t0 = time.perf_counter_ns()
                for _ in range(a.runs):
                    graphs[0].run([x])
                times.append((time.perf_counter_ns() - t0) / a.runs / 1e3)
            res["graph_call_us"] = statistics.median(times)
        return res
    return (lambda: f(x)), check


SETUPS = {"infer": setup_infer, "train": setup_train, "overhead": setup_overhead}


def worker(a) -> int:
    """The protocol of bench/run.py's workers: @@READY@@ once compiled and
    warmed up, a @@ROUND@@ summary for each line read, @@RESULT@@ last.
    With --first-call-only, only the compile (first call) is timed."""
    res = {"engine": a.worker, "workload": f"{a.kind}:{a.name}"}
    try:
        import torch
        torch.set_num_threads(a.threads)
        torch.set_num_interop_threads(1)
        fn, check = SETUPS[a.kind](torch, a.worker, a)
        t0 = time.perf_counter()
        out = fn()
        res["first_call_s"] = time.perf_counter() - t0
        if a.first_call_only:
            res["status"] = "ok"
            print("@@RESULT@@" + json.dumps(res), flush=True)
            return 0
        res.update(check(out))
        for _ in range(a.warmup):
            fn()
        print("@@READY@@", flush=True)
        rounds = []
        for _ in range(a.rounds):
            if not sys.stdin.readline():
                break
            for _ in range(a.warmup):
                fn()
            times = []
            for _ in range(a.runs):
                t0 = time.perf_counter_ns()
                fn()
                times.append((time.perf_counter_ns() - t0) / 1e6)
            rounds.append(run.summarize(times))
            print("@@ROUND@@" + json.dumps(rounds[-1]), flush=True)
        res["rounds"] = rounds
        res["status"] = "ok"
    except Exception as e:
        res["status"] = "error"
        res["reason"] = f"{type(e).__name__}: {e}".strip()
        res["traceback"] = traceback.format_exc()
    print("@@RESULT@@" + json.dumps(res), flush=True)
    return 0


# --------------------------------------------------------------------------- #
# Driver
# --------------------------------------------------------------------------- #

def engine_process(engine, kind, name, a, caches, first_call_only=False):
    runs = a.overhead_runs if kind == "overhead" else a.runs
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", engine,
           "--kind", kind, "--name", name, "--threads", str(a.threads),
           "--runs", str(runs), "--warmup", str(a.warmup),
           "--rounds", str(a.rounds), "--cache", str(a.cache)]
    if first_call_only:
        cmd.append("--first-call-only")
    env = run.thread_env(a.threads)
    env["TCC_CACHE_DIR"] = str(caches / "tcc")
    env["TORCHINDUCTOR_CACHE_DIR"] = str(caches / "inductor")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(a.package)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return run.PeerProcess(engine, a, cmd, env)


def bench_workload(kind, name, engines, a) -> dict:
    """Every engine on one workload: set up one after another (each with
    fresh caches: a cold compile), then rounds in turn; then, unless
    --no-warm, a second process per engine times a warm compile."""
    per, procs, caches = {}, {}, {}
    for engine in engines:
        run.log(f"[bench] {kind}:{name} / {engine}: compiling ...")
        caches[engine] = Path(tempfile.mkdtemp(prefix=f"tcc-bench-{engine}-"))
        p = engine_process(engine, kind, name, a, caches[engine])
        if p.ready():
            procs[engine] = p
        else:
            per[engine] = p.close()
            run.log(f"[bench]   -> {per[engine].get('reason')}")
    for r in range(a.rounds):
        for engine, p in procs.items():
            time.sleep(0.3)  # the previous engine's spinning threads sleep
            p.run_round()
        run.log(f"[bench] {kind}:{name} round {r + 1}/{a.rounds} (ms): " + ", ".join(
            f"{e} {p.rounds[-1]['median_ms']:.4f}" if len(p.rounds) > r else f"{e} -"
            for e, p in procs.items()))
    for engine, p in procs.items():
        res = p.close()
        if res.get("status") == "ok":
            run.combine_rounds(res, p.rounds)
            if not p.rounds:
                res["status"], res["reason"] = "error", "no timed round"
        per[engine] = res
    tcc_rounds = per.get("tcc", {}).get("rounds") or []
    for engine, res in per.items():
        n = min(len(res.get("rounds") or []), len(tcc_rounds))
        if engine != "tcc" and res.get("status") == "ok" and n:
            res["ratio"] = statistics.median(
                res["rounds"][i]["median_ms"] / tcc_rounds[i]["median_ms"]
                for i in range(n))
    if a.warm and kind != "overhead":
        for engine in engines:
            if engine == "eager" or per.get(engine, {}).get("status") != "ok":
                continue
            p = engine_process(engine, kind, name, a, caches[engine], True)
            warm = p.close()
            if warm.get("status") == "ok":
                per[engine]["warm_first_call_s"] = warm["first_call_s"]
    return {e: per[e] for e in engines if e in per}


def cell(res, unit_us=False):
    if not res:
        return "-"
    if res.get("status") != "ok":
        msg = (res.get("reason") or "?").splitlines()[0]
        return msg if len(msg) <= 40 else msg[:37] + "..."
    ms = res["bench"]["median_ms"]
    s = f"{ms * 1000:.1f} us" if unit_us else (f"{ms:.3f}" if ms < 10 else f"{ms:.2f}")
    if "ratio" in res:
        s += f" ({res['ratio']:.2f}x)"
    if res.get("check") == "fail":
        s += " WRONG"
    return s


def render(report, markdown):
    engines = report["config"]["engines"]
    table = run.md_table if markdown else run.text_table
    out = []
    for kind, title in (("infer", "inference, ms per call"),
                        ("train", "training, ms per step"),
                        ("overhead", "call overhead of x + 1")):
        rows = [[name] + [cell(per.get(e), kind == "overhead") for e in engines]
                for (k, name), per in report["results"].items() if k == kind]
        if kind == "overhead":
            rows += [["tcc graph alone", f"{per['tcc']['graph_call_us']:.1f} us"]
                     + ["-"] * (len(engines) - 1)
                     for (k, _), per in report["results"].items()
                     if k == kind and "graph_call_us" in per.get("tcc", {})]
        if rows:
            out.append(f"{title} ((x) = engine / tcc: >1 means tcc is faster)\n")
            out.append(table(["workload"] + engines, rows))
    comp = [e for e in engines if e != "eager"]
    rows = []
    for (kind, name), per in report["results"].items():
        if kind == "overhead":
            continue
        row = [f"{kind}:{name}"]
        for e in comp:
            r = per.get(e, {})
            cold, warm = r.get("first_call_s"), r.get("warm_first_call_s")
            row.append("-" if cold is None else
                       f"{cold:.2f} / {warm:.2f}" if warm is not None else f"{cold:.2f}")
        rows.append(row)
    if rows:
        out.append("first call (compile), s: cold / warm\n")
        out.append(table(["workload"] + comp, rows))
    return "\n".join(out)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--infer", default=",".join(INFER),
                    help="inference models, or none (default %(default)s)")
    ap.add_argument("--train", default=",".join(TRAIN),
                    help="training workloads, or none (default %(default)s)")
    ap.add_argument("--no-overhead", dest="overhead", action="store_false")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=30, help="timed calls per round")
    ap.add_argument("--overhead-runs", type=int, default=2000,
                    help="timed calls per round of the overhead workload")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-warm", dest="warm", action="store_false",
                    help="skip the warm-compile processes")
    ap.add_argument("--cache", type=Path, default=run.REPO / "build" / "models",
                    help="model cache of bench/run.py (default %(default)s)")
    ap.add_argument("--package", type=Path, default=run.REPO / "build" / "python",
                    help="folder holding the tcc package (default %(default)s)")
    ap.add_argument("--json", type=Path, metavar="OUT")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: tiny_cnn and the MLP step, tcc and eager, few runs; "
                         "exit 1 when an engine fails")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    ap.add_argument("--kind", choices=list(SETUPS), help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    ap.add_argument("--first-call-only", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.smoke:
        a.infer, a.train, a.engines = "tiny_cnn", "mlp", "tcc,eager"
        a.runs, a.warmup, a.rounds, a.overhead_runs = 3, 1, 1, 50
        a.warm = False
    a.cache = a.cache.resolve()
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    if a.worker:
        return worker(a)
    engines = [e for e in a.engines.split(",") if e]
    if "tcc" not in engines or any(e not in ENGINES for e in engines):
        print(f"--engines: a comma list of {', '.join(ENGINES)} with tcc", file=sys.stderr)
        return 2
    work = [("infer", n) for n in a.infer.split(",") if n and n != "none"]
    work += [("train", n) for n in a.train.split(",") if n and n != "none"]
    if a.overhead:
        work.append(("overhead", "x+1"))
    mi, ver = run.machine_info(a.threads), run.versions(run.REPO / "build" / "bin")
    print(f"machine : {mi['cpu']} | {mi['usable_cores']} usable cores | "
          f"ISA {' '.join(mi['isa']) or '-'} | threads {a.threads}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in ver.items() if v))
    sys.stdout.flush()
    a.cache.mkdir(parents=True, exist_ok=True)
    report = {"machine": mi, "versions": ver,
              "config": {"engines": engines, "threads": a.threads, "runs": a.runs,
                         "warmup": a.warmup, "rounds": a.rounds},
              "results": {}}
    failed = []
    for kind, name in work:
        per = bench_workload(kind, name, engines, a)
        report["results"][(kind, name)] = per
        failed += [f"{kind}:{name}/{e}" for e, r in per.items()
                   if r.get("status") != "ok" or r.get("check") == "fail"]
    print()
    print(render(report, markdown=False))
    for (kind, name), per in report["results"].items():
        for e, r in per.items():
            if r.get("status") != "ok" or r.get("check") == "fail":
                print(f"note: {kind}:{name}/{e}: {r.get('reason') or r.get('check_detail')}")
    if a.markdown:
        print("\n----- markdown -----\n")
        print(render(report, markdown=True))
    if a.json:
        doc = dict(report, results={f"{k}:{n}": per
                                    for (k, n), per in report["results"].items()})
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(doc, indent=2) + "\n")
    if a.smoke and failed:
        print(f"\nSMOKE FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
