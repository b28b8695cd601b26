"""PyTorch's OpInfo database as the torch frontend's conformance suite.

For every OpInfo (torch.testing._internal.common_methods_invocations.op_db)
and each of its sample inputs in a dtype, the op is compiled with
torch.compile(backend="tcc", fullgraph=True, dynamic=False) with the eager
fallback off (what tcc compiles itself) and compared with eager.

    opinfo.py [--dtype float32] [--shard K/N] [--expected FILE] [--json OUT]
              [--write-expected FILE] [--only NAME,...] [--max-samples M]
              [--full]
    opinfo.py --markdown OUT.md REPORT.json...

Each sample is one of
  pass      compiled by tcc and equal to eager (within the tolerance below);
  refused   tcc does not compile it (an op it lacks, an argument it cannot
            take): an expected failure when FILE lists it, else a failure;
  wrong     compiled, but the result differs from eager: always a failure;
  xpass     passes although FILE lists it: reported, so the list shrinks.
A process that crashes fails its shard.

The samples of one op (at most --max-samples, 8) are compiled together, as
one graph (one artifact), so that the suite fits its time budget; an op
whose graph is refused or wrong is tried again one sample at a time, to
tell which samples tcc takes, unless FILE lists every sample of it as
refused (then the batch's refusal is that; --full tries each anyway).
FILE lists `OPINFO@SAMPLES REASON` lines, SAMPLES `*` or `0,3,5`;
--write-expected writes the refused samples of a run in that form.

Tolerances: float32 rtol 1e-4, atol 1e-5 (tcc's vectorized exp, tanh,
erf... differ from libm's in the last bits, and reductions sum in another
order): the frontend's other tests use the same; float64 rtol 1e-7,
atol 1e-7 (complex results: those of their parts' type), but eager's
error where its float64 forms are off themselves (EAGER_FLOAT64_ATOL);
integers and bools exactly. NaNs must match.

Ops whose results are random, uninitialized, or not a function of their
inputs (rand*, normal, bernoulli, dropout, empty*, ...) are skipped with
that reason: no reference exists for them.
"""

import argparse
import json
import os
import re
import sys
import time
import warnings

import torch
import torch.utils._pytree as pytree

RANDOM = re.compile(r"(^|_)(rand|randn|randint|normal|bernoulli|dropout|"
                    r"multinomial|uniform|exponential|cauchy|geometric|"
                    r"log_normal|empty|new_empty|empty_like|empty_strided|"
                    r"rrelu)($|_)|^nn\.functional\.(dropout|alpha_dropout|"
                    r"feature_alpha_dropout|rrelu)")
DTYPES = {"float32": torch.float32, "float64": torch.float64,
          "int64": torch.int64, "bool": torch.bool}
TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-7, 1e-7)}
# Complex results: those of their real and imaginary parts' type.
TOLERANCES[torch.complex64] = TOLERANCES[torch.float32]
TOLERANCES[torch.complex128] = TOLERANCES[torch.float64]
# Where eager's float64 forms are off themselves, checked against mpmath
# (to whose values tcc's agree within 1e-15 there), the float64 atol is
# eager's error (test_special.py checks the same functions on dense grids):
# the Bessel functions of the first and second kind by up to 9e-7 between
# 2 and 8 (J_0 at 5.576: eager 0.0189425006, mpmath and tcc 0.0189426417),
# Airy's Ai by 3e-6 near -2.09, the Hurwitz zeta function at negative q by
# up to 7e-7.
EAGER_FLOAT64_ATOL = {"special.bessel_j0": 1e-6, "special.bessel_j1": 1e-6,
                      "special.bessel_y0": 1e-6, "special.bessel_y1": 1e-6,
                      "special.airy_ai": 5e-6, "special.zeta": 1e-6}


def op_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name
                      else "")


def tensors_of(sample):
    """The sample's tensors (graph inputs) and a function that puts new ones
    in their places."""
    tree = (sample.input, sample.args, sample.kwargs)
    leaves, spec = pytree.tree_flatten(tree)
    where = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]

    def rebuild(ts):
        new = list(leaves)
        for i, t in zip(where, ts):
            new[i] = t
        return pytree.tree_unflatten(new, spec)
    return [leaves[i] for i in where], rebuild


def call(op, rebuild, ts):
    x, args, kwargs = rebuild(ts)
    return op(x, *args, **kwargs)


def compiled_batch(op, samples):
    """One function of all samples' tensors, compiled by tcc."""
    parts = [tensors_of(s) for s in samples]
    counts = [len(ts) for ts, _ in parts]

    def fn(*flat):
        outs, at = [], 0
        for (_, rebuild), n in zip(parts, counts):
            outs.append(call(op, rebuild, flat[at:at + n]))
            at += n
        return outs
    flat = [t for ts, _ in parts for t in ts]
    torch._dynamo.reset()
    return torch.compile(fn, backend="tcc", fullgraph=True, dynamic=False,
                         options={"fallback": False}), flat


def first_line(e):
    inner = getattr(e, "inner_exception", None) or e.__cause__
    if inner is not None and type(e).__name__ == "BackendCompilerFailed":
        e = inner  # what tcc said, not Dynamo's wrapper
    text = str(e).strip()
    line = text.splitlines()[0] if text else type(e).__name__
    return f"{type(e).__name__}: {line}"[:240]


def compare(got, want, name=""):
    """None when equal within tolerance (OpInfo `name`'s), else why not."""
    g, gs = pytree.tree_flatten(got)
    w, ws = pytree.tree_flatten(want)
    if len(g) != len(w):
        return f"{len(g)} results where eager gives {len(w)}"
    for a, b in zip(g, w):
        if isinstance(b, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return f"a {type(a).__name__} where eager gives a tensor"
            if a.dtype != b.dtype or a.shape != b.shape:
                return (f"{a.dtype}{list(a.shape)} where eager gives "
                        f"{b.dtype}{list(b.shape)}")
            rtol, atol = TOLERANCES.get(b.dtype, (0, 0))
            if b.dtype == torch.float64:
                atol = EAGER_FLOAT64_ATOL.get(name, atol)
            try:
                torch.testing.assert_close(a, b, rtol=rtol, atol=atol,
                                           equal_nan=True)
            except AssertionError as e:
                return "values differ: " + " ".join(
                    str(e).split("\n")[1:3]).strip()[:200]
        elif a != b:
            return f"{a!r} where eager gives {b!r}"
    return None


def run_samples(op, samples):
    """[(outcome, detail)] per sample, all compiled as one graph."""
    with torch.no_grad():
        want = []
        for s in samples:
            ts, rebuild = tensors_of(s)
            want.append(call(op, rebuild, ts))
        fn, flat = compiled_batch(op, samples)
        try:
            got = fn(*flat)
        except Exception as e:  # Unsupported, CompileError, Dynamo's
            return [("refused", first_line(e))] * len(samples)
    out = []
    for s, g, w in zip(samples, got, want):
        why = compare(g, w, op_id(op))
        if why is not None and op_id(op) in TIED_INDICES:
            why = compare_tied(op_id(op), s, g, w)
        out.append(("pass", "") if why is None else ("wrong", why))
    return out


# Ops whose indices name one of several equal elements without saying
# which (torch's CPU and CUDA kernels differ; sort and argsort unless
# stable=True): their values must equal eager's and their indices must
# select those values from the input. The name maps to where the dim and
# keepdim arguments sit, (position among (input, *args), keyword,
# default), and whether the op returns (values, indices) or indices only.
TIED_INDICES = {"topk": ((2, "dim", -1), None, "pair"),
                "kthvalue": ((2, "dim", -1), (3, "keepdim", False), "pair"),
                "sort": ((1, "dim", -1), None, "pair"),
                "argsort": ((1, "dim", -1), None, "indices")}


def compare_tied(name, sample, got, want):
    """None when `got`'s values equal eager's and its indices select those
    values from the input, else why not."""
    dim_spec, keep_spec, kind = TIED_INDICES[name]
    if sample.kwargs.get("stable"):
        return compare(got, want)
    args = (sample.input,) + tuple(sample.args)

    def arg(spec):
        if spec is None:  # the dimension is kept
            return True
        at, key, default = spec
        return args[at] if len(args) > at else sample.kwargs.get(key, default)
    x, dim, keepdim = sample.input, arg(dim_spec), arg(keep_spec)

    def pick(idx):
        if x.dim() == 0:
            return x.clone() if idx.numel() == 1 and int(idx) == 0 else None
        if not keepdim:
            idx = idx.unsqueeze(dim)
        picked = torch.take_along_dim(x, idx, dim)
        return picked if keepdim else picked.squeeze(dim)
    if kind == "pair":
        why = compare(got[0], want[0])
        if why is not None:
            return why
        got_idx, values = got[1], want[0]
    else:
        got_idx, values = got, pick(want)
    if not isinstance(got_idx, torch.Tensor) or got_idx.dtype != torch.int64:
        return "indices that are not an int64 tensor"
    picked = pick(got_idx)
    if picked is None or not torch.equal(picked, values):
        return "indices that do not select the values eager gives"
    return None


def run_op(op, dtype, max_samples, all_expected=False):
    """(outcomes per sample index, a reason if the op is skipped). With
    `all_expected` (every sample listed as refused) a refused batch is not
    tried sample by sample: the list says so already, and a batch that
    passes is still seen."""
    if RANDOM.search(op.name):
        return [], "random or uninitialized results: no reference"
    if dtype not in op.supported_dtypes("cpu"):
        return [], f"no {dtype} samples"
    torch.manual_seed(0)  # the same samples in every run and shard
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    except Exception as e:
        return [], "its samples cannot be made: " + first_line(e)
    samples = samples[:max_samples]
    keep = []
    for s in samples:  # samples eager itself refuses are not tests
        try:
            with torch.no_grad():
                ts, rebuild = tensors_of(s)
                call(op, rebuild, ts)
            keep.append(s)
        except Exception:
            keep.append(None)
    live = [s for s in keep if s is not None]
    if not live:
        return [], "eager refuses every sample"
    results = run_samples(op, live)
    batch_refused = all(r[0] == "refused" for r in results)
    if any(r[0] != "pass" for r in results) and len(live) > 1 and \
            not (all_expected and batch_refused):
        # One refused or wrong sample spoils the batch's graph: each alone.
        results = [run_samples(op, [s])[0] for s in live]
    outcomes, it = [], iter(results)
    for s in keep:
        outcomes.append(next(it) if s is not None else None)
    return outcomes, None


def read_expected(path):
    """{op id: (set of sample indices or None for all, reason)}."""
    expected = {}
    if not path or not os.path.exists(path):
        return expected
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, reason = line.partition(" ")
        name, _, which = key.partition("@")
        samples = None if which in ("", "*") else {
            int(k) for k in which.split(",")}
        expected[name] = (samples, reason.strip())
    return expected


def listed(expected, name, k):
    if name not in expected:
        return False
    samples, _ = expected[name]
    return samples is None or k in samples


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    p.add_argument("--shard", default="0/1")
    p.add_argument("--expected")
    p.add_argument("--write-expected")
    p.add_argument("--json")
    p.add_argument("--only")
    p.add_argument("--max-samples", type=int, default=8)
    p.add_argument("--full", action="store_true",
                   help="try every sample of an op listed as refused "
                        "whole one by one (to refresh the list)")
    p.add_argument("--markdown", nargs="+", metavar=("OUT", "JSON"),
                   help="write OUT from the JSON reports of a run")
    a = p.parse_args(argv)
    if a.markdown:
        markdown(a.markdown[1:], a.markdown[0])
        return 0
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    import tcc.torch  # noqa: F401  (registers the backend)
    from torch.testing._internal.common_methods_invocations import op_db

    dtype = DTYPES[a.dtype]
    k, n = (int(v) for v in a.shard.split("/"))
    ops = sorted(op_db, key=op_id)
    if a.only:
        names = set(a.only.split(","))
        ops = [op for op in ops if op_id(op) in names or op.name in names]
    ops = [op for i, op in enumerate(ops) if i % n == k]
    expected = read_expected(a.expected)
    report = {"dtype": a.dtype, "shard": a.shard,
              "max_samples": a.max_samples, "ops": {}}
    failures, xpasses = [], []
    counts = {"pass": 0, "refused": 0, "wrong": 0, "expected": 0, "xpass": 0}
    start = time.time()
    for op in ops:
        name = op_id(op)
        t0 = time.time()
        every = name in expected and expected[name][0] is None
        outcomes, skipped = run_op(op, dtype, a.max_samples,
                                   every and not a.full)
        entry = {"skipped": skipped, "samples": [], "seconds":
                 round(time.time() - t0, 2), "aten_name": op.aten_name}
        for i, o in enumerate(outcomes):
            if o is None:
                continue
            kind, detail = o
            entry["samples"].append([i, kind, detail])
            if kind == "pass":
                counts["pass"] += 1
                if listed(expected, name, i):
                    counts["xpass"] += 1
                    xpasses.append(f"{name}@{i}")
            elif kind == "refused" and listed(expected, name, i):
                counts["expected"] += 1
                counts["refused"] += 1
            else:
                counts[kind] += 1
                failures.append(f"{name}@{i}: {kind}: {detail}")
        report["ops"][name] = entry
        print(f"{name}: " + (f"skipped ({skipped})" if skipped else
              " ".join(f"{i}:{o[0]}" for i, o in enumerate(outcomes)
                       if o is not None)), flush=True)
    report["counts"] = counts
    report["seconds"] = round(time.time() - start, 1)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    if a.write_expected:
        write_expected(a.write_expected, report)
    total = counts["pass"] + counts["refused"] + counts["wrong"]
    print(f"\n{a.dtype} shard {a.shard}: {len(ops)} ops, {total} samples: "
          f"{counts['pass']} pass, {counts['refused']} refused "
          f"({counts['expected']} expected), {counts['wrong']} wrong; "
          f"{report['seconds']} s")
    for x in xpasses:
        print(f"XPASS {x}: passes, but is listed as expected to fail")
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


def summarize(ops):
    """Counts of one dtype's run: samples by outcome, ops passing every
    sample / at least one, ops run and skipped, and the table rows of the
    OpInfos with a sample that does not pass."""
    rows, totals = [], {"pass": 0, "refused": 0, "wrong": 0}
    op_pass = op_any = skipped = op_run = 0
    for name, e in sorted(ops.items()):
        if e["skipped"]:
            skipped += 1
            continue
        c = {"pass": 0, "refused": 0, "wrong": 0}
        for _, kind, _ in e["samples"]:
            c[kind] += 1
        for k in c:
            totals[k] += c[k]
        n = sum(c.values())
        op_pass += c["pass"] == n
        op_any += c["pass"] > 0
        if c["pass"] < n:  # the table lists what is left to do
            first = next(d for _, kind, d in e["samples"] if kind != "pass")
            rows.append(f"| `{name}` | {c['pass']}/{n} | "
                        f"{first.replace('|', '/')[:100]} |")
        op_run += 1
    return totals, op_pass, op_any, op_run, skipped, rows


def markdown(reports, out):
    """docs/torch-opinfo.md from the JSON reports of a run's shards (one
    or more dtypes)."""
    runs = {}  # dtype -> {"ops", "seconds", "max_samples"}
    for path in reports:
        r = json.load(open(path))
        run = runs.setdefault(r["dtype"], {"ops": {}, "seconds": 0.0,
                                           "max_samples": 8})
        run["seconds"] += r["seconds"]
        run["max_samples"] = r.get("max_samples", 8)
        run["ops"].update(r["ops"])
    order = [d for d in DTYPES if d in runs]
    summary = ["| dtype | samples an op (at most) | samples passing | "
               "refused | wrong | OpInfos passing every sample | "
               "at least one | run | skipped | minutes on one core |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    tables = []
    for dtype in order:
        run = runs[dtype]
        totals, op_pass, op_any, op_run, skipped, rows = summarize(run["ops"])
        n = sum(totals.values())
        summary.append(
            f"| {dtype} | {run['max_samples']} | {totals['pass']} of {n} "
            f"({100.0 * totals['pass'] / max(n, 1):.1f}%) | "
            f"{totals['refused']} | {totals['wrong']} | {op_pass} | "
            f"{op_any} | {op_run} | {skipped} | {run['seconds'] / 60:.1f} |")
        tables.append(f"""## {dtype}: the OpInfos with a sample that does not pass

| OpInfo | samples passing | first reason of a sample that does not |
|---|---|---|
""" + "\n".join(rows) + "\n")
    core = core_coverage([item for d in order
                          for item in runs[d]["ops"].items()])
    with open(out, "w") as f:
        f.write(f"""# PyTorch's OpInfo suite against tcc

Generated by `test/torch/opinfo.py --markdown` from a full run (torch
{torch.__version__}): every OpInfo of
`torch.testing._internal.common_methods_invocations.op_db` compiled with
`torch.compile(backend="tcc", fullgraph=True)` and the eager fallback off,
against eager (see the script's docstring for tolerances), in each dtype
the OpInfo takes. ctest runs it in shards (`torch-opinfo-<dtype>-*`)
against `test/torch/opinfo_expected_<dtype>.txt`, which lists every
refused sample with its reason; [torch-ops.md](torch-ops.md) lists the
ATen ops the frontend converts. A sample is *refused* when tcc does not
compile it (each is listed with its reason) and *wrong* when it compiles
but differs from eager. An OpInfo is *skipped* when its results are random
or it has no samples in the dtype.

{chr(10).join(summary)}

{core}

""")
        f.write("\n".join(tables))


def core_coverage(ops):
    """The paragraph on the core ATen ops that have an OpInfo of their own
    name (its op or aten name): how many pass at least one sample (of any
    dtype run), and which do not. `ops`: (OpInfo id, entry) pairs."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_ops_doc import core_ops

    names = sorted({str(op).split(".")[1] for op in core_ops()})
    by_name = {}
    for op_name, e in ops:
        if e["skipped"]:
            continue
        for key in {op_name.split(".")[0], e.get("aten_name")}:
            by_name.setdefault(key, []).append(e)
    having = [nm for nm in names if nm in by_name]
    failing = [nm for nm in having if not any(
        kind == "pass" for e in by_name[nm] for _, kind, _ in e["samples"])]
    text = (f"**Core ATen:** {len(having)} of the {len(names)} core ATen ops "
            "have an OpInfo of their name; "
            f"{len(having) - len(failing)} of them pass at least one sample "
            "in some dtype")
    if failing:
        text += ("; these do not: " +
                 ", ".join(f"`{nm}`" for nm in failing) + ".")
    else:
        text += "."
    return text


def write_expected(path, report):
    """The refused samples of this run, as an expected-failure list."""
    lines = []
    for name, entry in sorted(report["ops"].items()):
        refused = [(i, d) for i, kind, d in entry["samples"]
                   if kind == "refused"]
        if not refused:
            continue
        every = len(refused) == len(entry["samples"])
        which = "*" if every else ",".join(str(i) for i, _ in refused)
        lines.append(f"{name}@{which} {refused[0][1]}")
    with open(path, "a") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))


if __name__ == "__main__":
    sys.exit(main())
