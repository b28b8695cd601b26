#!/usr/bin/env python3
"""Time tcc against its peers on the same models, threads and inputs.

One command, one table of median latencies and ratios (peer_ms / tcc_ms: >1
means tcc is faster). Peers:

  ort       ONNX Runtime, CPUExecutionProvider, ORT_ENABLE_ALL,
            intra_op_num_threads=T, inter_op_num_threads=1
  eager     PyTorch eager, torch.set_num_threads(T), inference_mode
  inductor  torch.compile (Inductor, default mode); its compile time (first
            call, caches disabled) is reported separately
  iree      IREE: iree-import-onnx + iree-compile (llvm-cpu, host CPU),
            run with the Python runtime on local-task with T worker threads

tcc is compiled with build/bin/tcc (the compile is timed) and timed by
`tcc-run --bench N --warmup W --threads T --json`.

Every (engine, model) pair is timed in its own process, on the same input
data (test_data_set_0/input_K.pb), in R rounds (--rounds) that the engines
take in turn: each round W warm-up calls, then N timed calls. An engine's
figure is the median over its rounds of each round's median (and min/p90/
mean); a ratio is the median over the rounds of peer / tcc in that round. Each engine's output is also checked against the
PyTorch reference output (rtol 1e-3, atol 1e-4). A peer that cannot run a model
gets the reason in its cell; the run itself never stops for that.

Examples (use the project venv's python):
  bench/run.py --models mlp,resnet18 --threads 2 --runs 50 --warmup 10
  bench/run.py --peers ort,iree --json build/bench.json --markdown
  bench/run.py --smoke          # CI: tiny_cnn only, few runs, exit 1 on failure
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

sys.dont_write_bytecode = True  # importing models/make_models.py must not litter models/

REPO = Path(__file__).resolve().parents[1]
MODELS_SRC = REPO / "models"
ALL_PEERS = ["ort", "eager", "inductor", "iree"]
PEER_TITLES = {"tcc": "tcc", "ort": "ORT", "eager": "eager",
               "inductor": "inductor", "iree": "IREE"}
DEFAULT_MODELS = ["mlp", "resnet18", "mobilenet_v2", "encoder"]
SHIPPED = {"tiny_cnn": MODELS_SRC / "tiny_cnn"}
RTOL, ATOL = 1e-3, 1e-4


# --------------------------------------------------------------------------- #
# Small helpers
# --------------------------------------------------------------------------- #

def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def tail(text: str, n: int = 6) -> str:
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return "\n".join(lines[-n:])


def summarize(times_ms: list[float]) -> dict:
    s = sorted(times_ms)
    p90 = s[min(len(s) - 1, max(0, int(round(0.9 * len(s))) - 1))]
    return {"median_ms": statistics.median(s), "min_ms": s[0], "p90_ms": p90,
            "mean_ms": statistics.fmean(s), "runs": len(s)}


def pkg_version(name: str) -> str | None:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None


def thread_env(threads: int) -> dict:
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[k] = str(threads)
    return env


def bin_path(tool: str) -> str | None:
    p = Path(sys.executable).parent / tool
    if p.exists():
        return str(p)
    return shutil.which(tool)


# --------------------------------------------------------------------------- #
# Worker side: runs in a fresh process for one (peer, model)
# --------------------------------------------------------------------------- #

def load_case(model_dir: Path):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    case = model_dir / "test_data_set_0"

    def load(prefix):
        out, k = [], 0
        while (case / f"{prefix}_{k}.pb").exists():
            t = onnx.load_tensor(str(case / f"{prefix}_{k}.pb"))
            out.append(np.ascontiguousarray(numpy_helper.to_array(t)))
            k += 1
        return out
    return load("input"), load("output")


def torch_module(name: str):
    sys.path.insert(0, str(MODELS_SRC))
    if name == "tiny_cnn":
        import make_tiny_cnn
        return make_tiny_cnn.build_model()
    import make_models
    if name not in make_models.MODELS:
        raise RuntimeError(f"no PyTorch source for model '{name}'")
    return make_models.build_model(name)


def setup_ort(a, inputs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    t0 = time.perf_counter()
    sess = ort.InferenceSession(str(a.model_dir / "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    setup_s = time.perf_counter() - t0
    feed = {i.name: x for i, x in zip(sess.get_inputs(), inputs)}
    return (lambda: sess.run(None, feed)), {"session_s": setup_s}


def _torch_setup(a):
    import torch
    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    return torch


def _as_list(out):
    if isinstance(out, (list, tuple)):
        return [o.numpy() for o in out]
    return [out.numpy()]


def setup_eager(a, inputs):
    torch = _torch_setup(a)
    model = torch_module(a.name)
    xs = [torch.from_numpy(x) for x in inputs]

    def fn():
        with torch.inference_mode():
            return _as_list(model(*xs))
    return fn, {}


def setup_inductor(a, inputs):
    torch = _torch_setup(a)
    model = torch_module(a.name)
    xs = [torch.from_numpy(x) for x in inputs]
    torch._dynamo.reset()
    compiled = torch.compile(model)  # Inductor, default mode

    def fn():
        with torch.inference_mode():
            return _as_list(compiled(*xs))
    t0 = time.perf_counter()
    fn()  # triggers compilation
    return fn, {"compile_s": time.perf_counter() - t0}


def iree_compile(a) -> tuple[Path, dict]:
    """Import + compile model.onnx to a vmfb, cached on model mtime + version."""
    model = a.model_dir / "model.onnx"
    out = a.cache / a.name / "iree"
    out.mkdir(parents=True, exist_ok=True)
    vmfb, stamp = out / "model.vmfb", out / "stamp.txt"
    key = (f"{model.stat().st_mtime_ns} {model.stat().st_size} "
           f"{pkg_version('iree-base-compiler')} {a.iree_cpu} {a.iree_flags}")
    if vmfb.exists() and stamp.exists() and stamp.read_text() == key and not a.recompile:
        return vmfb, {"compile_cached": True}
    imp, comp = bin_path("iree-import-onnx"), bin_path("iree-compile")
    if not imp or not comp:
        raise RuntimeError("iree-import-onnx / iree-compile not found "
                           "(pip install iree-base-compiler)")
    mlir = out / "model.mlir"
    t0 = time.perf_counter()
    r = subprocess.run([imp, str(model), "-o", str(mlir)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("iree-import-onnx failed: " + tail(r.stderr + r.stdout, 4))
    t1 = time.perf_counter()
    r = subprocess.run([comp, str(mlir), "-o", str(vmfb),
                        "--iree-hal-target-device=local",
                        "--iree-hal-local-target-device-backends=llvm-cpu",
                        f"--iree-llvmcpu-target-cpu={a.iree_cpu}",
                        *shlex.split(a.iree_flags)],
                       capture_output=True, text=True)
    t2 = time.perf_counter()
    mlir.unlink(missing_ok=True)
    if r.returncode != 0:
        vmfb.unlink(missing_ok=True)
        raise RuntimeError("iree-compile failed: " + tail(r.stderr + r.stdout, 4))
    stamp.write_text(key)
    return vmfb, {"import_s": t1 - t0, "compile_s": t2 - t0, "compile_cached": False}


def setup_iree(a, inputs):
    vmfb, info = iree_compile(a)
    import iree.runtime as rt
    # Exactly T task-system workers (group_count ignores the topology mode;
    # max_group_count would round down to physical cores).
    rt.flags.parse_flags(f"--task_topology_group_count={a.threads}")
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.mmap(ctx.instance, str(vmfb)))
    mod = ctx.modules.module
    fname = "main_graph" if "main_graph" in mod.vm_module.function_names else \
        [f for f in mod.vm_module.function_names if not f.startswith("__") and "$" not in f][0]
    f = mod[fname]

    def fn():
        r = f(*inputs)
        rs = r if isinstance(r, (list, tuple)) else [r]
        return [x.to_host() for x in rs]
    return fn, info


SETUPS = {"ort": setup_ort, "eager": setup_eager, "inductor": setup_inductor,
          "iree": setup_iree}


def check_outputs(outs, refs) -> dict:
    import numpy as np
    if len(outs) != len(refs):
        return {"check": "fail", "check_detail": f"{len(outs)} outputs, expected {len(refs)}"}
    worst = 0.0
    for o, r in zip(outs, refs):
        o = np.asarray(o)
        if o.shape != r.shape:
            return {"check": "fail", "check_detail": f"shape {o.shape} != {r.shape}"}
        worst = max(worst, float(np.max(np.abs(o.astype(np.float64) - r))) if r.size else 0.0)
        if not np.allclose(o, r, rtol=RTOL, atol=ATOL):
            return {"check": "fail", "check_detail": f"max abs err {worst:.3g}"}
    return {"check": "pass", "max_abs_err": worst}


def worker(a) -> int:
    """Sets the peer up and warms it up, prints @@READY@@, then times one
    round of --warmup untimed and --runs timed calls for each line read on
    stdin (--rounds of them),
    printing @@ROUND@@ after each: the driver interleaves the engines'
    rounds. Ends with @@RESULT@@ (the check and every round's summary)."""
    res = {"peer": a.worker, "model": a.name}
    try:
        inputs, refs = load_case(a.model_dir)
        fn, info = SETUPS[a.worker](a, inputs)
        res.update(info)
        outs = None
        for _ in range(a.warmup):
            outs = fn()
        print("@@READY@@", flush=True)
        rounds = []
        for _ in range(a.rounds):
            if not sys.stdin.readline():
                break
            for _ in range(a.warmup):  # as tcc-run does each round
                outs = fn()
            times = []
            for _ in range(a.runs):
                t0 = time.perf_counter_ns()
                outs = fn()
                times.append((time.perf_counter_ns() - t0) / 1e6)
            rounds.append(summarize(times))
            print("@@ROUND@@" + json.dumps(rounds[-1]), flush=True)
        if outs is None:
            outs = fn()
        res.update(check_outputs(outs, refs) if refs else {"check": "no reference"})
        res["rounds"] = rounds
        res["status"] = "ok"
    except Exception as e:
        res["status"] = "error"
        res["reason"] = f"{type(e).__name__}: {e}".strip()
        res["traceback"] = traceback.format_exc()
    print("@@RESULT@@" + json.dumps(res), flush=True)
    return 0


# --------------------------------------------------------------------------- #
# Driver side
# --------------------------------------------------------------------------- #

def machine_info(threads: int) -> dict:
    cpu = platform.processor() or "unknown"
    flags = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and cpu in ("unknown", "", platform.machine()):
                cpu = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile")
           if f in flags]
    try:
        avail = len(os.sched_getaffinity(0))
    except AttributeError:
        avail = os.cpu_count()
    return {"cpu": cpu, "logical_cores": os.cpu_count(), "usable_cores": avail,
            "isa": isa, "threads": threads, "os": platform.platform(),
            "python": platform.python_version()}


def versions(bin_dir: Path) -> dict:
    v = {k: pkg_version(k) for k in ("torch", "torchvision", "onnx", "onnxruntime",
                                     "iree-base-compiler", "iree-base-runtime", "numpy")}
    tcc = bin_dir / "tcc"
    if tcc.exists():
        try:
            r = subprocess.run([str(tcc), "--version"], capture_output=True, text=True, timeout=20)
            v["tcc"] = tail(r.stdout or r.stderr, 1) or "unknown"
        except Exception:
            v["tcc"] = "unknown"
    else:
        v["tcc"] = None
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx:
        try:
            v["c++ (inductor)"] = subprocess.run([cxx, "--version"], capture_output=True,
                                                 text=True, timeout=20).stdout.splitlines()[0]
        except Exception:
            pass
    return v


def ensure_iree(allow_install: bool) -> str | None:
    """Return None when IREE is usable, else the reason it is not."""
    if pkg_version("iree-base-compiler") and pkg_version("iree-base-runtime"):
        return None
    if not allow_install:
        return "IREE not installed (--no-install)"
    log("[bench] installing iree-base-compiler iree-base-runtime from PyPI ...")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                        "iree-base-compiler", "iree-base-runtime"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "pip install of IREE failed: " + tail(r.stderr, 2)
    import importlib
    importlib.invalidate_caches()
    if not (pkg_version("iree-base-compiler") and pkg_version("iree-base-runtime")):
        return "IREE still not importable after pip install"
    return None


def prepare_models(names, cache: Path) -> dict:
    """Map model name -> (folder or None, reason)."""
    found, gen = {}, []
    sys.path.insert(0, str(MODELS_SRC))
    for n in names:
        if n in SHIPPED:
            d = SHIPPED[n]
            if (d / "model.onnx").exists():
                found[n] = (d, None)
            else:
                gen.append(n)
        else:
            gen.append(n)
    if gen:
        import make_models
        known = [n for n in gen if n in make_models.MODELS]
        for n in gen:
            if n not in known and n not in SHIPPED:
                found[n] = (None, f"unknown model (known: {', '.join(list(make_models.MODELS) + list(SHIPPED))})")
        if "tiny_cnn" in gen:
            r = subprocess.run([sys.executable, str(MODELS_SRC / "make_tiny_cnn.py"),
                                "--out", str(cache / "tiny_cnn")], capture_output=True, text=True)
            found["tiny_cnn"] = ((cache / "tiny_cnn", None) if r.returncode == 0 else
                                 (None, "make_tiny_cnn.py failed: " + tail(r.stderr, 2)))
        if known:
            r = subprocess.run([sys.executable, str(MODELS_SRC / "make_models.py"),
                                "--out", str(cache), *known], capture_output=True, text=True)
            for line in r.stdout.splitlines():
                log("  " + line)
            for n in known:
                ok = (cache / n / "model.onnx").exists() and r.returncode == 0
                found[n] = ((cache / n, None) if ok else
                            (None, "make_models.py failed: " + tail(r.stderr, 2)))
    return found


def peer_process(peer, name, mdir, a):
    """The worker process of `peer` on model `name` (this script)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", peer,
           "--name", name, "--model-dir", str(mdir), "--threads", str(a.threads),
           "--runs", str(a.runs), "--warmup", str(a.warmup),
           "--rounds", str(a.rounds), "--cache", str(a.cache),
           "--iree-cpu", a.iree_cpu, f"--iree-flags={a.iree_flags}"] + \
        (["--recompile"] if a.recompile else [])
    env = thread_env(a.threads)
    if peer == "inductor":
        # Measure a cold compile every time (comparable with tcc's compile).
        env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    return PeerProcess(peer, a, cmd, env)


class PeerProcess:
    """A peer's worker process, kept alive across the rounds of one model:
    `cmd` prints @@READY@@ once set up, a @@ROUND@@ summary for each line
    it reads, and @@RESULT@@ at the end (see `worker`). `a` gives the
    timeout and verbosity."""

    def __init__(self, peer, a, cmd, env):
        self.peer, self.a = peer, a
        self.result = None
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
        self.rounds = []
        # Lines arrive through a thread, so that a worker that hangs without
        # printing anything still times out.
        self.lines = queue.Queue()
        self.err = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines),
                         daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, None),
                         daemon=True).start()

    def _pump(self, stream, q):
        for line in stream:
            if q is not None:
                q.put(line)
            else:
                self.err.append(line)
        if q is not None:
            q.put(None)

    def _read_until(self, tag: str):
        """The payload of the next line starting with `tag`; None once the
        worker has ended (its result, if any, is kept)."""
        deadline = time.monotonic() + self.a.timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.proc.kill()
                self.result = {"status": "error",
                               "reason": f"timed out after {self.a.timeout}s"}
                return None
            if line is None:
                self._finish()
                return None
            if line.startswith("@@RESULT@@"):
                self.result = json.loads(line[len("@@RESULT@@"):])
                if self.result.get("status") == "error" and self.a.verbose:
                    log(self.result.get("traceback", ""))
                self.result.pop("traceback", None)
                if tag != "@@RESULT@@":
                    return None
                return self.result
            if line.startswith(tag):
                return line[len(tag):]

    def _finish(self):
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        err = "".join(self.err)
        if self.result is None:
            self.result = {"status": "error",
                           "reason": f"worker exited {self.proc.returncode} without a "
                                     "result: " + tail(err, 3)}

    def ready(self) -> bool:
        """Waits for the set-up (compilation) and warm-up."""
        return self._read_until("@@READY@@") is not None

    def run_round(self):
        """One round of timed calls; its summary, or None if the worker failed."""
        if self.result is not None:
            return None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        payload = self._read_until("@@ROUND@@")
        if payload is None:
            return None
        self.rounds.append(json.loads(payload))
        return self.rounds[-1]

    def close(self) -> dict:
        if self.result is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            self._read_until("@@RESULT@@")
            if self.result is None:
                self._finish()
        self.proc.wait()
        res = self.result
        res["process_wall_s"] = time.perf_counter() - self.t0
        return res


def parse_tcc_json(stdout: str):
    try:
        return json.loads(stdout)
    except ValueError:
        pass
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def compile_tcc(name, mdir, a) -> dict:
    tcc, tcc_run = a.bin_dir / "tcc", a.bin_dir / "tcc-run"
    if not (tcc.exists() and tcc_run.exists()):
        return {"status": "n/a", "reason": "tcc not built"}
    out = a.cache / name / "tcc"
    out.mkdir(parents=True, exist_ok=True)
    so = out / "model.so"
    so.unlink(missing_ok=True)
    cmd = [str(tcc), str(mdir / "model.onnx"), "-o", str(so), *shlex.split(a.tcc_flags)]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "error", "reason": f"tcc compile timed out after {a.timeout}s"}
    compile_s = time.perf_counter() - t0
    if r.returncode != 0 or not so.exists():
        return {"status": "error", "compile_s": compile_s,
                "reason": f"tcc compile failed (exit {r.returncode}): " + tail(r.stderr + r.stdout, 3)}
    return {"status": "ok", "compile_s": compile_s, "so": so}


def run_tcc_round(so, mdir, a, compile_s) -> dict:
    """One tcc-run process: W warm-up and N timed runs (and the check)."""
    tcc_run = a.bin_dir / "tcc-run"
    cmd = [str(tcc_run), str(so), "--inputs", str(mdir / "test_data_set_0"),
           "--bench", str(a.runs), "--warmup", str(a.warmup),
           "--threads", str(a.threads), "--json"]
    has_ref = (mdir / "test_data_set_0" / "output_0.pb").exists()
    if a.check and has_ref:
        cmd += ["--check", "--rtol", str(RTOL), "--atol", str(ATOL)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout,
                           env=thread_env(a.threads))
    except subprocess.TimeoutExpired:
        return {"status": "error", "compile_s": compile_s,
                "reason": f"tcc-run timed out after {a.timeout}s"}
    doc = parse_tcc_json(r.stdout)
    # tcc-run --json reports each data set's numbers under "sets".
    bench = None
    if isinstance(doc, dict):
        bench = doc.get("bench")
        sets = doc.get("sets") or []
        if not bench and sets and isinstance(sets[0], dict):
            bench = sets[0].get("bench")
    if not bench or "median_ms" not in bench:
        return {"status": "error", "compile_s": compile_s,
                "reason": f"tcc-run exit {r.returncode}, no bench JSON: " + tail(r.stderr + r.stdout, 3)}
    res = {"status": "ok", "compile_s": compile_s, "bench": bench, "tcc_run": doc}
    if a.check and has_ref:
        res["check"] = "pass" if r.returncode == 0 else "fail"
        if r.returncode != 0:
            res["check_detail"] = tail(r.stderr, 2) or f"tcc-run exit {r.returncode}"
    elif r.returncode != 0:
        res["status"] = "error"
        res["reason"] = f"tcc-run exit {r.returncode}: " + tail(r.stderr, 2)
    return res


# ----------------------------- reporting ----------------------------------- #

def cell(res: dict | None, tcc_ms: float | None, width: int = 40) -> str:
    if res is None:
        return "-"
    if res.get("status") != "ok":
        msg = res.get("reason", res.get("status", "?")).splitlines()[0]
        return msg if len(msg) <= width else msg[: width - 3] + "..."
    ms = res["bench"]["median_ms"]
    s = f"{ms:.3f}" if ms < 10 else f"{ms:.2f}"
    if tcc_ms:
        s += f" ({res.get('ratio', ms / tcc_ms):.2f}x)"
    if res.get("check") == "fail":
        s += " WRONG"
    return s


def compile_cell(engine: str, res: dict | None) -> str:
    if not res or "compile_s" not in res:
        if res and res.get("compile_cached"):
            return "cached"
        return "-"
    return f"{res['compile_s']:.2f}"


def render(report: dict, markdown: bool) -> str:
    engines = ["tcc"] + report["config"]["peers"]
    rows = []
    for model, per in report["results"].items():
        t = per.get("tcc", {})
        tcc_ms = t["bench"]["median_ms"] if t.get("status") == "ok" else None
        rows.append([model] + [cell(per.get(e), tcc_ms) for e in engines])
    head = ["model"] + [f"{PEER_TITLES[e]} ms" + ("" if e == "tcc" else " (x)") for e in engines]
    comp_engines = [e for e in engines if e in ("tcc", "inductor", "iree")]
    crow = [[m] + [compile_cell(e, per.get(e)) for e in comp_engines]
            for m, per in report["results"].items()]
    chead = ["model"] + [f"{PEER_TITLES[e]} compile s" for e in comp_engines]
    out = []
    if markdown:
        mi, v = report["machine"], report["versions"]
        out.append(f"Machine: {mi['cpu']}, {mi['usable_cores']} cores "
                   f"({', '.join(mi['isa']) or 'no AVX2'}), {mi['threads']} threads; "
                   f"median of {report['config']['runs']} runs after "
                   f"{report['config']['warmup']} warm-ups.\n")
        out.append("Versions: " + ", ".join(f"{k} {x}" for k, x in v.items() if x) + "\n")
        out.append(md_table(head, rows))
        out.append("\n(x) = peer_ms / tcc_ms; > 1 means tcc is faster.\n")
        out.append(md_table(chead, crow))
    else:
        out.append(text_table(head, rows))
        out.append("(x) = peer_ms / tcc_ms; >1 means tcc is faster.  WRONG = output check failed.\n")
        out.append(text_table(chead, crow))
    return "\n".join(out)


def text_table(head, rows) -> str:
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    fmt = lambda r: "  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)).rstrip()
    return "\n".join([fmt(head), "  ".join("-" * x for x in w)] + [fmt(r) for r in rows]) + "\n"


def md_table(head, rows) -> str:
    esc = lambda c: str(c).replace("|", "\\|")
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(head) - 1)) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def notes(report: dict) -> list[str]:
    out = []
    for model, per in report["results"].items():
        for e, res in per.items():
            if res.get("status") == "error":
                out.append(f"{model}/{e}: {res.get('reason')}")
            elif res.get("check") == "fail":
                out.append(f"{model}/{e}: output check failed: {res.get('check_detail')}")
    return out


def combine_rounds(res: dict, rounds: list[dict]) -> None:
    """The engine's figures over its rounds: the median of the rounds'
    medians (min and p90 likewise), every round kept."""
    res["rounds"] = rounds
    if rounds:
        res["bench"] = {k: statistics.median(r[k] for r in rounds)
                        for k in ("median_ms", "min_ms", "p90_ms", "mean_ms")}
        res["bench"]["runs"] = sum(r["runs"] for r in rounds)


def bench_model(name, mdir, peers, iree_problem, a) -> dict:
    """Every engine on one model. Each peer runs in its own process, set up
    (compiled) and warmed up one after another; then the engines take turns,
    a round of --runs calls each, --rounds times, so that a machine whose
    speed drifts (a shared VM) slows every engine alike. Ratios are the
    median over the rounds of peer / tcc in that round."""
    per = {}
    log(f"[bench] {name} / tcc: compiling ...")
    tcc = compile_tcc(name, mdir, a)
    if tcc.get("status") != "ok":
        per["tcc"] = tcc
        log(f"[bench]   -> {tcc.get('reason', tcc.get('status'))}")
    procs = {}
    for engine in peers:
        if engine == "iree" and iree_problem:
            per[engine] = {"status": "n/a", "reason": iree_problem}
            continue
        log(f"[bench] {name} / {engine}: setting up ...")
        p = peer_process(engine, name, mdir, a)
        if p.ready():
            procs[engine] = p
        else:
            per[engine] = p.close()
            log(f"[bench]   -> {per[engine].get('reason', per[engine].get('status'))}")
    tcc_rounds, tcc_last = [], None
    pause = 0.0 if a.smoke else 0.3  # let the last engine's spinning threads sleep
    for r in range(a.rounds):
        if tcc.get("status") == "ok":
            time.sleep(pause)
            tcc_last = run_tcc_round(tcc["so"], mdir, a, tcc["compile_s"])
            if tcc_last.get("status") == "ok":
                tcc_rounds.append(tcc_last["bench"])
        for engine, p in procs.items():
            time.sleep(pause)
            p.run_round()
        line = [f"tcc {tcc_rounds[-1]['median_ms']:.3f}" if len(tcc_rounds) > r else "tcc -"]
        line += [f"{e} {p.rounds[-1]['median_ms']:.3f}" if len(p.rounds) > r else f"{e} -"
                 for e, p in procs.items()]
        log(f"[bench] {name} round {r + 1}/{a.rounds} (ms): " + ", ".join(line))
    if tcc.get("status") == "ok":
        res = dict(tcc_last or {})
        res.pop("bench", None)
        combine_rounds(res, tcc_rounds)
        if not tcc_rounds:
            res.setdefault("status", "error")
        per["tcc"] = res
    for engine, p in procs.items():
        res = p.close()
        if res.get("status") == "ok":
            combine_rounds(res, p.rounds)
            if not p.rounds:
                res["status"], res["reason"] = "error", "no timed round"
        per[engine] = res
    # Per-round ratios against tcc.
    for engine in peers:
        res = per.get(engine, {})
        pr = res.get("rounds") or []
        n = min(len(pr), len(tcc_rounds))
        if res.get("status") == "ok" and n:
            ratios = [pr[i]["median_ms"] / tcc_rounds[i]["median_ms"] for i in range(n)]
            res["ratio"] = statistics.median(ratios)
            res["round_ratios"] = ratios
    order = ["tcc"] + peers
    return {e: per[e] for e in order if e in per}


# ------------------------------- main -------------------------------------- #

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma list (default %(default)s; also: tiny_cnn, "
                         "zoo = every model of make_models.py's zoo)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=50, help="timed runs (median of N)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed warm-up runs")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of --runs calls per engine, the engines taking turns "
                         "(default %(default)s)")
    ap.add_argument("--peers", default=",".join(ALL_PEERS),
                    help="comma list of %s (tcc always runs if built)" % ",".join(ALL_PEERS))
    ap.add_argument("--json", type=Path, metavar="OUT", help="write all numbers to OUT")
    ap.add_argument("--markdown", action="store_true", help="also print markdown tables")
    ap.add_argument("--smoke", action="store_true",
                    help="CI smoke test: tiny_cnn only, tiny run counts, exit 1 on failure")
    ap.add_argument("--cache", type=Path, default=REPO / "build" / "models",
                    help="model cache (make_models.py output; default %(default)s)")
    ap.add_argument("--bin-dir", type=Path,
                    default=Path(os.environ.get("TCC_BIN_DIR", REPO / "build" / "bin")),
                    help="folder with tcc and tcc-run (default $TCC_BIN_DIR or build/bin)")
    ap.add_argument("--tcc-flags", default="-O3", help="extra tcc flags (default %(default)s)")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="do not pass --check to tcc-run")
    ap.add_argument("--iree-cpu", default="host", help="--iree-llvmcpu-target-cpu value")
    ap.add_argument("--iree-flags", default="",
                    help="extra iree-compile flags (default none), e.g. "
                         "--iree-preprocessing-pass-pipeline=... (see bench/README.md)")
    ap.add_argument("--recompile", action="store_true", help="ignore cached IREE builds")
    ap.add_argument("--no-install", action="store_true", help="never pip install IREE")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per engine and model")
    ap.add_argument("-v", "--verbose", action="store_true", help="print peer tracebacks")
    # internal
    ap.add_argument("--worker", choices=ALL_PEERS, help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    ap.add_argument("--model-dir", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.smoke:
        a.models, a.runs, a.warmup = "tiny_cnn", min(a.runs, 5), min(a.warmup, 2)
        a.rounds = min(a.rounds, 2)
    a.cache = a.cache.resolve()
    a.bin_dir = a.bin_dir.resolve()
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    if a.worker:
        return worker(a)

    models = []
    for m in (m for m in a.models.split(",") if m):
        if m == "zoo":  # models/make_models.py's zoo
            sys.path.insert(0, str(MODELS_SRC))
            import make_models
            models += make_models.ZOO
        else:
            models.append(m)
    peers = [p for p in a.peers.split(",") if p]
    bad = [p for p in peers if p not in ALL_PEERS]
    if bad:
        print(f"unknown peer(s): {', '.join(bad)}; known: {', '.join(ALL_PEERS)}", file=sys.stderr)
        return 2
    if a.threads < 1 or a.runs < 1 or a.warmup < 0 or a.rounds < 1:
        print("--threads, --runs and --rounds must be >= 1, --warmup >= 0", file=sys.stderr)
        return 2

    iree_problem = ensure_iree(not a.no_install) if "iree" in peers else None
    mi, ver = machine_info(a.threads), versions(a.bin_dir)
    print(f"machine : {mi['cpu']} | {mi['usable_cores']} usable / {mi['logical_cores']} logical "
          f"cores | ISA {' '.join(mi['isa']) or '-'} | threads {a.threads}")
    print("versions: " + ", ".join(f"{k} {v or 'missing'}" for k, v in ver.items()))
    print(f"config  : models {','.join(models)} | peers {','.join(peers)} | "
          f"median of {a.runs} after {a.warmup} warm-ups | {sys.executable}")
    sys.stdout.flush()

    a.cache.mkdir(parents=True, exist_ok=True)
    model_dirs = prepare_models(models, a.cache)
    report = {"machine": mi, "versions": ver,
              "config": {"threads": a.threads, "runs": a.runs, "warmup": a.warmup,
                         "peers": peers, "models": models, "tcc_flags": a.tcc_flags,
                         "iree_cpu": a.iree_cpu, "iree_flags": a.iree_flags,
                         "rtol": RTOL, "atol": ATOL},
              "results": {}}
    expected_fail = []
    for name in models:
        mdir, why = model_dirs[name]
        per = report["results"][name] = {}
        if mdir is None:
            for engine in ["tcc"] + peers:
                per[engine] = {"status": "error", "reason": why}
            continue
        per.update(bench_model(name, mdir, peers, iree_problem, a))
        for engine, res in per.items():
            if res.get("status") == "error" or res.get("check") == "fail":
                expected_fail.append(f"{name}/{engine}")

    print()
    print(render(report, markdown=False))
    for n in notes(report):
        print("note: " + n)
    if a.markdown:
        print("\n----- markdown -----\n")
        print(render(report, markdown=True))
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {a.json}")
    if a.smoke and expected_fail:
        print(f"\nSMOKE FAILED: {', '.join(expected_fail)}", file=sys.stderr)
        return 1
    if a.smoke:
        print("\nsmoke: all available engines ran and matched the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
