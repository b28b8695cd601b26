#!/usr/bin/env python3
"""The ONNX backend test suite through tcc: every test is compiled with
`tcc model.onnx -o m.so` and checked with `tcc-run m.so --inputs DIR --check`
at ONNX's tolerances (rtol 1e-3, atol 1e-7).

The suite is the pip onnx package's backend test data, four folders:

  node               generated from onnx.backend.test.case.node into the build
                     folder (generate_node_data.py; the wheel ships no files)
  simple, pytorch-converted, pytorch-operator
                     read from onnx/backend/test/data in the installed package

Two adaptations, both what other ahead-of-time compilers' harnesses do for
static-shape compilation, and both recorded per test in the results:

  * graph inputs whose declared shape is missing or has symbolic dimensions
    get `--input-shape NAME=...` from the test's own input_K.pb;
  * a graph input the importer needs as a constant (it says "input K ('X')
    must be a constant", or of a value it needs as a constant or static,
    "it is computed from graph input 'X'") becomes an initializer holding
    the test's own input_K.pb (one artifact per data set when sets
    differ); the remaining inputs are fed to tcc-run in order;
  * a size the run computes from values that needs a bound (the importer
    asks for `--dim NAME=MAX`) gets the most elements of the test's
    expected outputs, and each dimension of the output NAME names its
    largest size in them (`--dim NAME_<d>=...`).

Expectations: test/onnx/expected_failures.txt lists every test expected to
fail, one `folder/test  reason` line each. The reason must occur in the
diagnostic tcc gives. The run fails on any unlisted failure, on any listed
test that passes (the list only shrinks), and on any failure that is not a
clean compile-time diagnostic naming the node and op (`node '...' (Op,
opset N)`), the data type or the attribute: crashes, timeouts, wrong
answers and run-time errors can never be expected.

Commands:
  run      run a folder (or one chunk of it) in parallel, write a JSON report
  docs     write docs/onnx-ops.md from the reports' test list, the
           expectations and tcc's op table
  expect   rewrite the expectations file from JSON reports (for developers;
           keeps existing reasons that still match)
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FOLDERS = ("node", "simple", "pytorch-converted", "pytorch-operator")
RTOL, ATOL = "1e-3", "1e-7"
COMPILE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 60
MAX_FREEZE_ROUNDS = 8

# A failure may be expected only when tcc refused the model with one of these.
CLEAN_DIAGNOSTIC = re.compile(
    r"node '[^']*' \([\w.]+, opset \d+\): "      # importer: node, op, opset
    r"|node '[^']*' \([\w.]+\)': "                 # later passes: node, op
    r"|(graph input|graph output|initializer|attribute) '[^']*'.*"
    r"(data type|has type|is a |is not supported)")
NEEDS_BOUND = re.compile(r"give its upper bound with --dim (\w+)=MAX")
NEEDS_CONSTANT = re.compile(r"input \d+ \('([^']*)'\) must be a constant")
# A value needed as a constant, or a size the run computes where a static
# one is needed: the importer names the graph inputs it comes from.
COMPUTED_FROM = re.compile(r"it is computed from graph inputs? ('.*)")


def package_data_dir() -> Path:
    return Path(onnx.__file__).parent / "backend" / "test" / "data"


def folder_dir(folder: str, node_dir: Path) -> Path:
    return node_dir if folder == "node" else package_data_dir() / folder


def list_tests(folder: str, node_dir: Path) -> list[str]:
    root = folder_dir(folder, node_dir)
    return sorted(p.name for p in root.iterdir()
                  if (p / "model.onnx").is_file())


#===------------------------------------------------------------------------===#
# Expectations
#===------------------------------------------------------------------------===#

def read_expectations(path: Path) -> dict[str, str]:
    expected = {}
    if not path.exists():
        return expected
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        reason = reason.strip()
        if not reason or name in expected:
            sys.exit(f"{path}:{n}: each line is 'folder/test reason', once")
        expected[name] = reason
    return expected


#===------------------------------------------------------------------------===#
# Running one test
#===------------------------------------------------------------------------===#

def data_sets(test_dir: Path) -> list[Path]:
    sets = [p for p in test_dir.glob("test_data_set_*") if p.is_dir()]
    return sorted(sets, key=lambda p: int(p.name.rsplit("_", 1)[1]))


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def load_tensor(path: Path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return t


def shape_flags(inputs, set_dir: Path) -> list[str]:
    """--input-shape for each input whose declared shape is not static."""
    flags = []
    for k, vi in enumerate(inputs):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            continue
        static = tt.HasField("shape") and all(
            d.HasField("dim_value") for d in tt.shape.dim)
        f = set_dir / f"input_{k}.pb"
        if static or not f.exists():
            continue
        dims = list(load_tensor(f).dims)
        flags.append(f"--input-shape={vi.name}=" + "x".join(map(str, dims)))
    return flags


def output_bound(sets: list[Path]) -> int:
    """The most elements of any expected output of the data sets (at least
    1): a bound on every size the outputs have."""
    most = 1
    for set_dir in sets:
        for f in set_dir.glob("output_*.pb"):
            t = onnx.TensorProto()
            t.ParseFromString(f.read_bytes())
            most = max(most, math.prod(t.dims))
    return most


def output_dim_bounds(model, name: str, sets: list[Path]) -> list[int]:
    """Per dimension, the largest size the expected output that tcc names
    `name` (its name made an identifier) has in the data sets; empty when
    there is no such output."""
    for k, vi in enumerate(model.graph.output):
        ident = re.sub(r"\W", "_", vi.name)
        if ident[:1].isdigit() or not ident:
            ident = "_" + ident
        if ident != name:
            continue
        most: list[int] = []
        for set_dir in sets:
            f = set_dir / f"output_{k}.pb"
            if not f.exists():
                continue
            dims = list(load_tensor(f).dims)
            most = [max(a, b) for a, b in zip(most, dims)] \
                if len(most) == len(dims) else dims
        return most
    return []


def first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("error: "):
            return line[len("error: "):]
    lines = stderr.strip().splitlines()
    return lines[-1] if lines else ""


def run_cmd(cmd, timeout):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout, errors="replace")
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, "", ""


def read_tolerances(path: Path) -> dict[str, tuple[str, str]]:
    """test/onnx/tolerances.txt: `folder/test rtol atol reason` lines, the
    tests checked at other tolerances than ONNX's defaults, each with why
    (as ONNX Runtime's backend test runner keeps per-test overrides)."""
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                test, rtol, atol, reason = line.split(None, 3)
                assert reason, f"{path}: {test} needs a reason"
                out[test] = (rtol, atol)
    return out


class Runner:
    def __init__(self, tcc: Path, tcc_run: Path, work: Path,
                 tolerances: dict[str, tuple[str, str]] | None = None):
        self.tcc, self.tcc_run, self.work = tcc, tcc_run, work
        self.tolerances = tolerances or {}

    def compile(self, model_path: Path, out: Path, flags: list[str]):
        return run_cmd([str(self.tcc), str(model_path), "-o", str(out),
                        *flags], COMPILE_TIMEOUT_S)

    def run_test(self, folder: str, test_dir: Path) -> dict:
        start = time.monotonic()
        result = {"test": f"{folder}/{test_dir.name}", "frozen": [],
                  "input_shapes": []}
        work = self.work / folder / test_dir.name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        try:
            status, detail = self._run(test_dir, work, result)
        except Exception as e:  # the harness itself must never stop the run
            status, detail = "harness-error", f"{type(e).__name__}: {e}"
        result["status"] = status
        result["detail"] = detail
        result["seconds"] = round(time.monotonic() - start, 2)
        if status == "pass":
            shutil.rmtree(work, ignore_errors=True)
        return result

    def _run(self, test_dir: Path, work: Path, result: dict):
        model = onnx.load(str(test_dir / "model.onnx"), load_external_data=False)
        inputs = graph_inputs(model)
        sets = data_sets(test_dir)
        if not sets:
            return "harness-error", "no test_data_set_* folder"
        flags = shape_flags(inputs, sets[0])
        result["input_shapes"] = [f.split("=", 1)[1] for f in flags]

        # Compile; freeze the inputs the importer needs as constants.
        frozen: list[int] = []
        so = work / "m.so"
        model_path = test_dir / "model.onnx"
        for _ in range(MAX_FREEZE_ROUNDS):
            rc, _, err = self.compile(model_path, so, flags)
            if rc is None:
                return "timeout", f"tcc ran longer than {COMPILE_TIMEOUT_S} s"
            if rc == 0:
                result["bounds"] = [f.split("=", 1)[1] for f in flags
                                    if f.startswith("--dim=")]
                break
            diag = first_error(err)
            # A size the run computes from values needs a bound: the test's
            # largest expected output's element count holds it.
            b = NEEDS_BOUND.search(diag)
            if rc == 1 and b and not any(f.startswith(f"--dim={b.group(1)}=")
                                         for f in flags):
                flags.append(f"--dim={b.group(1)}={output_bound(sets)}")
                # (Sizes of several dimensions: each its own, NAME_<d>.)
                for d, size in enumerate(
                        output_dim_bounds(model, b.group(1), sets)):
                    flags.append(f"--dim={b.group(1)}_{d}={max(size, 1)}")
                continue
            m = NEEDS_CONSTANT.search(diag)
            c = COMPUTED_FROM.search(diag)
            names = [vi.name for vi in inputs]
            wanted = []
            if rc == 1 and m and m.group(1) in names:
                wanted = [m.group(1)]
            elif rc == 1 and c:
                wanted = re.findall(r"'([^']*)'", c.group(1))
            wanted = [n for n in wanted
                      if n in names and names.index(n) not in frozen]
            if wanted:
                for n in wanted:
                    frozen.append(names.index(n))
                    result["frozen"].append(n)
                model_path = self._freeze(model, inputs, frozen, sets[0],
                                          work / "model.onnx")
                # (Bounds asked for before may concern sizes the frozen
                # inputs now fix: asked for again if still needed.)
                flags = [f for f in flags
                         if f.split("=", 2)[1] not in result["frozen"]
                         and not f.startswith("--dim=")]
                continue
            if rc == 1:
                status = "unsupported" if CLEAN_DIAGNOSTIC.search(diag) \
                    else "unclear-diagnostic"
                return status, diag
            return "crash", f"tcc exited with {rc}: {diag}"
        else:
            return "harness-error", "too many inputs to freeze"

        # Run every data set; with frozen inputs each set gets its own build.
        for i, set_dir in enumerate(sets):
            if frozen:
                set_dir = self._remaining_inputs(set_dir, len(inputs), frozen,
                                                 work / f"set_{i}")
                if i > 0:
                    so = work / f"m{i}.so"
                    mp = self._freeze(model, inputs, frozen, sets[i],
                                      work / f"model{i}.onnx")
                    rc, _, err = self.compile(mp, so, flags)
                    if rc != 0:
                        return ("timeout" if rc is None else "crash",
                                f"data set {i}: {first_error(err)}")
            rtol, atol = self.tolerances.get(result["test"], (RTOL, ATOL))
            if (rtol, atol) != (RTOL, ATOL):
                result["tolerance"] = {"rtol": rtol, "atol": atol}
            rc, out, err = run_cmd(
                [str(self.tcc_run), str(so), "--inputs", str(set_dir),
                 "--check", "--rtol", rtol, "--atol", atol, "--json",
                 "--threads", "1"], RUN_TIMEOUT_S)
            if rc is None:
                return "timeout", f"tcc-run ran longer than {RUN_TIMEOUT_S} s"
            if rc not in (0, 1):
                return "crash", f"tcc-run exited with {rc}: {first_error(err)}"
            try:
                report = json.loads(out)
            except ValueError:
                return "run-error", first_error(err) or "tcc-run printed no JSON"
            if not report.get("passed"):
                return "mismatch", self._mismatch(report)
        return "pass", ""

    @staticmethod
    def _mismatch(report: dict) -> str:
        for s in report.get("sets", []):
            for o in s.get("outputs", []):
                c = o.get("check", {})
                if c.get("pass", True):
                    continue
                if "reason" in c:
                    return f"output '{o['name']}': {c['reason']}"
                fm = c.get("first_mismatch") or {}
                return (f"output '{o['name']}' {o['dtype']}{o['shape']}: "
                        f"{c.get('mismatches')}/{c.get('elements')} differ, "
                        f"first at {fm.get('position')}: got "
                        f"{fm.get('actual')}, expected {fm.get('expected')}")
        return "check failed"

    @staticmethod
    def _freeze(model, inputs, frozen, set_dir, out: Path) -> Path:
        m = onnx.ModelProto()
        m.CopyFrom(model)
        for k in frozen:
            t = load_tensor(set_dir / f"input_{k}.pb")
            t.name = inputs[k].name
            m.graph.initializer.append(t)
        onnx.save(m, str(out))
        return out

    @staticmethod
    def _remaining_inputs(set_dir: Path, n: int, frozen, out: Path) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        j = 0
        for k in range(n):
            if k in frozen:
                continue
            (out / f"input_{j}.pb").symlink_to((set_dir / f"input_{k}.pb").resolve())
            j += 1
        for f in set_dir.glob("output_*.pb"):
            (out / f.name).symlink_to(f.resolve())
        return out


#===------------------------------------------------------------------------===#
# run
#===------------------------------------------------------------------------===#

def judge(result: dict, expected: dict[str, str]) -> str | None:
    """Why `result` breaks the expectations, or None when it meets them."""
    name, status = result["test"], result["status"]
    reason = expected.get(name)
    if status == "pass":
        return (f"passes but is listed as an expected failure ({reason}); "
                f"remove it from the list") if reason else None
    if status != "unsupported":
        return f"{status}: {result['detail']}"
    if reason is None:
        return f"fails and is not listed: {result['detail']}"
    if reason not in result["detail"]:
        return (f"fails with another reason than listed ({reason}): "
                f"{result['detail']}")
    return None


def cmd_run(args) -> int:
    node_dir = Path(args.node_dir)
    tests = list_tests(args.folder, node_dir)
    if args.chunk:
        k, n = map(int, args.chunk.split("/"))
        tests = tests[k - 1::n]
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, t)]
    expected = read_expectations(Path(args.expectations))
    root = folder_dir(args.folder, node_dir)
    runner = Runner(Path(args.tcc), Path(args.tcc_run), Path(args.work),
                    read_tolerances(HERE / "tolerances.txt"))
    start = time.monotonic()
    results, problems = [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(runner.run_test, args.folder, root / t)
                   for t in tests]
        for f in concurrent.futures.as_completed(futures):
            r = f.result()
            results.append(r)
            why = judge(r, expected)
            if args.verbose or why:
                print(f"{r['status']:>12}  {r['test']}  {r['seconds']}s  "
                      f"{r['detail']}", flush=True)
            if why:
                problems.append(f"{r['test']}: {why}")
    results.sort(key=lambda r: r["test"])
    seconds = time.monotonic() - start
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(json.dumps(
            {"folder": args.folder, "chunk": args.chunk, "seconds": seconds,
             "results": results}, indent=1) + "\n")
    counts = collections.Counter(r["status"] for r in results)
    label = args.folder + (f" chunk {args.chunk}" if args.chunk else "")
    print(f"{label}: {counts['pass']}/{len(results)} pass "
          f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}) "
          f"in {seconds:.0f} s")
    if problems:
        print(f"\n{len(problems)} test(s) break the expectations "
              f"({args.expectations}):")
        for p in problems:
            print("  " + p)
        return 1
    return 0


#===------------------------------------------------------------------------===#
# expect
#===------------------------------------------------------------------------===#

def short_reason(detail: str) -> str:
    """The part of a diagnostic after the node prefix: what is wrong."""
    m = re.search(r"node '[^']*' \([^)]*\)'?: (.*)", detail)
    text = m.group(1) if m else re.sub(r"^[^:]*\.onnx: ", "", detail)
    return text.strip()


def cmd_expect(args) -> int:
    old = read_expectations(Path(args.expectations))
    lines = []
    for report in args.reports:
        for r in json.loads(Path(report).read_text())["results"]:
            if r["status"] == "pass":
                continue
            reason = old.get(r["test"])
            if not reason or reason not in r["detail"]:
                reason = short_reason(r["detail"])
            lines.append(f"{r['test']} {reason}")
    header = [l for l in Path(args.expectations).read_text().splitlines()
              if l.startswith("#")] if Path(args.expectations).exists() else []
    Path(args.expectations).write_text(
        "\n".join(header + sorted(lines)) + "\n")
    print(f"wrote {len(lines)} expected failures to {args.expectations}")
    return 0


#===------------------------------------------------------------------------===#
# docs
#===------------------------------------------------------------------------===#

def tested_op(model: onnx.ModelProto, name: str) -> tuple[str, int]:
    """The op a node test is about and the default-domain opset."""
    opset = next((o.version for o in model.opset_import
                  if o.domain in ("", "ai.onnx")), 0)
    n = model.graph.node[0] if model.graph.node else None
    op = (n.domain + "." if n is not None and n.domain not in ("", "ai.onnx")
          else "") + (n.op_type if n is not None else "?")
    return op, opset


def cell(text: str) -> str:
    """Text that is safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def op_table(path: str) -> dict[str, list[int]]:
    """tcc's importer table: op type -> the opsets where a version starts."""
    out = subprocess.run([path], capture_output=True, text=True, check=True)
    table = {}
    for line in out.stdout.splitlines():
        op, *since = line.split()
        table[op] = sorted(int(s) for s in since)
    return table


def cmd_docs(args) -> int:
    node_dir = Path(args.node_dir)
    expected = read_expectations(Path(args.expectations))
    table = op_table(args.op_table)
    per_folder = {}
    per_op = collections.defaultdict(
        lambda: {"pass": 0, "fail": 0, "opsets": set(), "reasons":
                 collections.Counter()})
    model_failures = []
    for folder in FOLDERS:
        tests = list_tests(folder, node_dir)
        failing = [t for t in tests if f"{folder}/{t}" in expected]
        per_folder[folder] = (len(tests) - len(failing), len(tests))
        if folder != "node":
            model_failures += [(f"{folder}/{t}", expected[f"{folder}/{t}"])
                               for t in failing]
            continue
        # An _expanded test counts for the op whose function it expands.
        ops = {}
        for t in tests:
            if "_expanded" in t:
                continue
            m = onnx.load(str(node_dir / t / "model.onnx"),
                          load_external_data=False)
            ops[t] = tested_op(m, t)
        for t in tests:
            base = re.sub(r"_expanded(_ver\d+)?$", "", t)
            if base not in ops:
                m = onnx.load(str(node_dir / t / "model.onnx"),
                              load_external_data=False)
                ops[base] = tested_op(m, t)
            op, _ = ops[base]
            m = onnx.load(str(node_dir / t / "model.onnx"),
                          load_external_data=False)
            _, opset = tested_op(m, t)
            entry = per_op[op]
            entry["opsets"].add(opset)
            reason = expected.get(f"node/{t}")
            if reason is None:
                entry["pass"] += 1
            else:
                entry["fail"] += 1
                entry["reasons"][reason] += 1
    total_pass = sum(p for p, _ in per_folder.values())
    total = sum(n for _, n in per_folder.values())

    def supported(op: str) -> str:
        since = table.get(op)
        return f"{since[0]}+" if since else "—"

    out = ["# ONNX backend test results",
           "",
           "<!-- Generated by test/onnx/onnx_backend.py docs; do not edit. "
           "Refresh with `ninja -C build update-onnx-ops-doc`. -->",
           "",
           f"**{total_pass} of {total} tests pass "
           f"({100.0 * total_pass / total:.1f}%)**: every test of the pip "
           f"onnx {onnx.__version__} backend suite in the folders node "
           f"(generated from `onnx.backend.test.case.node`), simple, "
           f"pytorch-converted and pytorch-operator, each compiled with "
           f"`tcc` and checked with `tcc-run --check` (rtol {RTOL}, "
           f"atol {ATOL}; {len(read_tolerances(HERE / 'tolerances.txt'))} "
           f"bf16, f16 and DFT tests at the looser tolerances, each with its "
           f"reason, of `test/onnx/tolerances.txt`).",
           "",
           "| folder | pass | tests | rate |",
           "|---|---:|---:|---:|"]
    for folder in FOLDERS:
        p, n = per_folder[folder]
        out.append(f"| {folder} | {p} | {n} | {100.0 * p / n:.1f}% |")
    out.append(f"| **all** | **{total_pass}** | **{total}** | "
               f"**{100.0 * total_pass / total:.1f}%** |")
    out += ["",
            "The suite runs in ctest (`test/onnx/`); "
            "`test/onnx/expected_failures.txt` lists every failing test with "
            "the diagnostic tcc gives, and a listed test that passes fails "
            "the run. How the runner adapts tests to static-shape "
            "compilation:",
            "",
            "* graph inputs with symbolic or missing dimensions are fixed "
            "with `--input-shape` from the test's own `input_K.pb`;",
            "* a graph input that the importer needs as a constant (axes, "
            "split sizes, ...: it reports \"must be a constant\", or for a "
            "value computed from it that must be constant or static, \"it is "
            "computed from graph input\") is made an initializer holding the "
            "test's own `input_K.pb`, and the other inputs are fed at run "
            "time;",
            "* a size the run computes from values that needs a bound (the "
            "importer asks for `--dim NAME=MAX`) gets the most elements of "
            "the test's expected outputs, and each dimension of that output "
            "its largest size in them (`--dim NAME_<d>=...`).",
            "",
            "## Node tests by op",
            "",
            "`tcc opsets`: the opsets the importer handles (from the op's "
            "first version it knows). `tested`: the opsets of the tests. "
            "Tests named `*_expanded` (the op's function body) count for "
            "the op they expand.",
            "",
            "| op | tcc opsets | tested | pass | fail | why the failures fail |",
            "|---|---|---|---:|---:|---|"]
    for op in sorted(per_op, key=str.lower):
        e = per_op[op]
        reasons = "; ".join(
            cell(r) + (f" (×{c})" if c > 1 else "")
            for r, c in e["reasons"].most_common(3))
        if len(e["reasons"]) > 3:
            reasons += "; …"
        out.append(f"| {op} | {supported(op)} | "
                   f"{', '.join(map(str, sorted(e['opsets'])))} | {e['pass']} | "
                   f"{e['fail']} | {reasons} |")
    out += ["", "## Failing model tests", ""]
    if model_failures:
        out += ["| test | why |", "|---|---|"]
        out += [f"| {t} | {cell(r)} |" for t, r in model_failures]
    else:
        out.append("None.")
    text = "\n".join(out) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}: {total_pass}/{total} pass")
    if args.check and (not Path(args.check).exists() or
                       Path(args.check).read_text() != text):
        print(f"{args.check} is not current; refresh it with "
              f"`ninja update-docs` (it should equal {args.out})")
        return 1
    return 0


def main() -> int:
    p = argparse.ArgumentParser(
        description="The ONNX backend test suite through tcc",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--node-dir", required=True,
                   help="the generated node tests (generate_node_data.py)")
    p.add_argument("--expectations", default=str(HERE / "expected_failures.txt"))
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--folder", choices=FOLDERS, required=True)
    r.add_argument("--chunk", help="K/N: every Nth test starting at the Kth")
    r.add_argument("--filter", help="only tests whose name matches this regex")
    r.add_argument("--tcc", required=True)
    r.add_argument("--tcc-run", required=True)
    r.add_argument("--work", required=True, help="scratch folder")
    r.add_argument("--report", help="write the results here as JSON")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("-v", "--verbose", action="store_true")
    e = sub.add_parser("expect")
    e.add_argument("reports", nargs="+")
    d = sub.add_parser("docs")
    d.add_argument("--op-table", required=True,
                   help="the onnx-op-table tool (prints tcc's op table)")
    d.add_argument("--out", required=True)
    d.add_argument("--check", help="fail unless this file equals the output")
    args = p.parse_args()
    return {"run": cmd_run, "expect": cmd_expect, "docs": cmd_docs}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
