"""torch.compile(model, backend="tcc"): the Dynamo backend.

Dynamo hands over a torch-level FX graph; AOTAutograd turns it into ATen
graphs (functionalized, with the core ATen decompositions): one for
inference, or a forward and a backward for training, and each is compiled
by tcc. Inside a graph, nodes tcc cannot compile are partitioned out with
torch.fx's capability-based partitioner and run in eager; `TCC_LOG=1` (or
`explain`) says which and why. Compiled artifacts are cached on disk by
graph and options, so a second process compiling the same model loads them.

Options (`torch.compile(..., options={...})`):
  threads       threads per run (default 0: one per online CPU)
  mcpu          target CPU (default: this machine's)
  opt_level     LLVM optimization level (default 3)
  ukernels      micro-kernels: auto, none, generic, avx2, avx512
  memory_report print each graph's memory plan: "text" or "json"
  cache_dir     where artifacts are kept (default ~/.cache/tcc/torch, or
                $TCC_CACHE_DIR)
  fallback      partition out what tcc cannot compile (default True); with
                False an unsupported op is an error
  freeze        compile a module's parameters and buffers into inference
                graphs as constants (default True): weights packed and
                batch norms folded at compile time; a weight changed in
                place or replaced compiles the graph again
  emit          also print each graph tcc compiles to stdout: "import" (the
                tcc dialect as imported, weights elided) or "tcc" (after
                the graph-level passes)
"""

import copy
import ctypes
import functools
import hashlib
import json
import os
import sys
import tempfile
import threading
import time

import torch
import torch.fx
import torch.utils.dlpack

from .. import _compiler, _tcc
from . import importer, ops
from .ops import Unsupported

_DEFAULTS = {
    "threads": 0,
    "mcpu": "",
    "opt_level": 3,
    "ukernels": "auto",
    "memory_report": None,
    "cache_dir": None,
    "fallback": True,
    "freeze": True,
    "emit": None,
    "idle_spin_us": 0,
    "thread_pool": "torch",
}


def _options(options):
    opts = dict(_DEFAULTS)
    for key, value in (options or {}).items():
        if key not in _DEFAULTS:
            raise ValueError(f"tcc backend: unknown option {key!r}; the "
                             f"options are {', '.join(sorted(_DEFAULTS))}")
        opts[key] = value
    if opts["thread_pool"] not in ("torch", "tcc"):
        raise ValueError(f"tcc backend: thread_pool must be 'torch' or "
                         f"'tcc', not {opts['thread_pool']!r}")
    if opts["emit"] not in (None, "import", "tcc"):
        raise ValueError(f"tcc backend: emit must be 'import' or 'tcc', not "
                         f"{opts['emit']!r}")
    if opts["cache_dir"] is None:
        opts["cache_dir"] = os.environ.get("TCC_CACHE_DIR") or os.path.join(
            os.path.expanduser("~"), ".cache", "tcc", "torch")
    return opts


def _logging():
    return os.environ.get("TCC_LOG", "") not in ("", "0")


class Stats:
    """What the backend did in this process (tests and benchmarks read it)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.graphs = 0          # ATen graphs handed to tcc
        self.imports = 0         # graphs imported into the tcc dialect
        self.compiled = 0        # artifacts compiled
        self.cache_hits = 0      # artifacts found in the cache
        self.compile_seconds = 0.0
        self.fallbacks = []      # (op, reason) of nodes left to eager


stats = Stats()
_lock = threading.RLock()


def _lib_dir():
    return os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "lib")


def compile_graph(graph, opts, output, dims=None):
    """Compiles a finished tcc Graph to the library `output`, in process;
    `dims`: its dynamic dimension's bounds (Signature.dims)."""
    extra = {"dims": dims} if dims else {}
    graph.compile(output, mcpu=opts["mcpu"], opt_level=opts["opt_level"],
                  ukernels=opts["ukernels"],
                  memory_report=opts["memory_report"], lib_dir=_lib_dir(),
                  **extra)


def _emit(graph, opts):
    """Prints `graph` at the stage the `emit` option names."""
    if opts["emit"] == "import":
        print(graph.mlir(elide_weights=True), flush=True)
    elif opts["emit"] == "tcc":
        sys.stdout.flush()
        graph.compile("-", emit="tcc", mcpu=opts["mcpu"])
        sys.stdout.flush()


def _artifact_path(opts, text, weights):
    """Where the artifact of a graph (its text, large weights elided, and
    the tensors compiled into it) is kept in the cache."""
    key = hashlib.sha256()
    key.update(text.encode())
    for t in weights:
        if t.device.type != "cpu" or not t.is_contiguous():
            t = t.detach().contiguous().cpu()
        if t.numel():  # the bytes where they are, not a copy
            key.update((ctypes.c_char * (t.numel() * t.element_size()))
                       .from_address(t.data_ptr()))
    for k in ("mcpu", "opt_level", "ukernels"):
        key.update(f"{k}={opts[k]};".encode())
    key.update(_tcc.__file__.encode())  # another build, another key
    key.update(str(os.path.getmtime(_compiler.__file__)).encode())
    return os.path.join(opts["cache_dir"], key.hexdigest()[:32] + ".so")


def _compile_into(graph, opts, path, dims=None):
    os.makedirs(opts["cache_dir"], exist_ok=True)
    start = time.perf_counter()
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=opts["cache_dir"])
    os.close(fd)
    try:
        compile_graph(graph, opts, tmp, dims)
        os.replace(tmp, path)  # atomic: another process may race us
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
        header = tmp[:-3] + ".h"
        if os.path.exists(header):
            os.remove(header)
    stats.compiled += 1
    stats.compile_seconds += time.perf_counter() - start


def _graph_text(graph, dims):
    """What keys a graph's artifact in the cache, with its weights' bytes:
    its text, large weights elided, and its dynamic dimension's bounds."""
    text = graph.mlir(elide_weights=True)
    return text + (f"\n// dims {sorted(dims.items())}\n" if dims else "")


def _cached_library(graph, opts, weights=(), dims=None):
    """The artifact of `graph` in the cache, compiled if it is not there;
    `weights` are the tensors compiled into it (hashed for the key, whose
    graph text leaves their bytes out), `dims` its dynamic dimension's
    bounds."""
    if opts["emit"]:
        _emit(graph, opts)
    path = _artifact_path(opts, _graph_text(graph, dims), weights)
    if os.path.exists(path) and not opts["memory_report"]:
        stats.cache_hits += 1
        return path
    _compile_into(graph, opts, path, dims)
    return path


def _write_signature(sig, path):
    """The signature of a cached artifact, beside it, so that a process
    finding the artifact need not import the graph again."""
    data = {"inputs": sig.inputs, "outputs": [list(o) for o in sig.outputs],
            "result_types": [[str(d).removeprefix("torch."), list(s)]
                             for d, s in sig.result_types],
            "layouts": sig.layouts, "input_layouts": sig.input_layouts,
            "plain": sig.plain,
            "trims": [[k, c] for k, c in sig.trims.items()],
            "dims": {k: list(v) for k, v in sig.dims.items()}}
    fd, tmp = tempfile.mkstemp(suffix=".json", dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _read_signature(path):
    """The signature _write_signature left, or None where there is none
    (or it cannot be read: the graph is imported again)."""
    try:
        with open(path) as f:
            data = json.load(f)
        return importer.Signature(
            inputs=[int(i) for i in data["inputs"]],
            outputs=[tuple(o) for o in data["outputs"]],
            result_types=[(getattr(torch, d), tuple(int(n) for n in s))
                          for d, s in data["result_types"]],
            layouts=[None if p is None else [int(i) for i in p]
                     for p in data["layouts"]],
            input_layouts=[None if p is None else [int(i) for i in p]
                           for p in data["input_layouts"]],
            plain=bool(data["plain"]),
            trims={int(k): int(c) for k, c in data["trims"]},
            dims={str(k): (int(v[0]), int(v[1]))
                  for k, v in data["dims"].items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


class CompiledGraph:
    """An ATen graph compiled by tcc, called as the graph is (tensors in,
    a tuple of tensors out).

    The inputs listed in `frozen` (a module's parameters and buffers, in an
    inference graph) are compiled in as constants at the first call, so
    that weights are packed and batch norms folded at compile time. Their
    version counters and addresses are checked at every call: a weight
    changed in place, or replaced, compiles the graph again with the new
    values."""

    def __init__(self, gm, opts, name="graph", frozen=()):
        self.gm, self.opts, self.name = gm, opts, name
        self.frozen = sorted(frozen)
        self.placeholders = [n for n in gm.graph.nodes
                             if n.op == "placeholder"]
        self.versions = None
        # Importing once with every input an input finds what tcc cannot
        # compile now, not at the first call.
        graph, sig = importer.import_graph(gm, name, input_layouts=True)
        self._adopt(sig)
        self.eager = False
        stats.imports += 1
        if not self.frozen:
            try:
                self._load(_cached_library(graph, opts, self.sig.constants,
                                           sig.dims))
            except _compiler.CompileError as e:
                self._dynamic_fallback(e)
        else:  # what keys the artifacts of its frozen versions
            self.text = (_graph_text(graph, sig.dims) +
                         f"\n// frozen inputs {self.frozen}\n")
            self.attributes = self.sig.constants

    def _dynamic_fallback(self, error):
        """A dynamic batch that some op mixes (a reduction over it, as a
        mean loss does) is a CompileError: the graph runs in eager, as torch
        would without tcc, unless fallback=False."""
        if not (self.sig.dims and self.opts["fallback"]):
            raise error
        self.eager = True
        _graph_fallback(self.name, error)

    def _load(self, path):
        opts = self.opts
        if opts["thread_pool"] == "torch" and torch._C.has_openmp:
            # PyTorch's intra-op threads (its OpenMP team) run tcc's loops
            # too: two pools on the same CPUs spin against each other.
            self.model = _tcc.load(
                path, num_threads=opts["threads"] or torch.get_num_threads(),
                threads_from="openmp")
        else:
            self.model = _tcc.load(path, num_threads=opts["threads"],
                                   idle_spin_us=opts["idle_spin_us"],
                                   share_threads=True)
        self.path = path

    def _build(self, values):
        """Compiles (or finds in the cache) the graph with `values` (FX
        placeholder index -> tensor) as constants. The cache is looked up by
        the graph with every input an input and the values' bytes, and the
        signature is kept beside the artifact: a warm start imports the
        graph once, without its weights."""
        weights = self.attributes + [values[i] for i in self.frozen]
        opts = self.opts
        path = _artifact_path(opts, self.text, weights)
        sig_path = path[:-3] + ".json"
        reuse = not opts["emit"] and not opts["memory_report"]
        sig = (_read_signature(sig_path)
               if reuse and os.path.exists(path) else None)
        if sig is not None:
            stats.cache_hits += 1
        else:
            constants = {self.placeholders[i].name: t
                         for i, t in values.items()}
            graph, sig = importer.import_graph(self.gm, self.name, constants,
                                               input_layouts=True)
            stats.imports += 1
            if opts["emit"]:
                _emit(graph, opts)
            if reuse and os.path.exists(path):
                stats.cache_hits += 1
            else:
                _compile_into(graph, opts, path, sig.dims)
            _write_signature(sig, sig_path)
        sig.constants = weights
        self._adopt(sig)
        self._load(path)

    def _adopt(self, sig):
        self.sig = sig
        # Results in order, row-major, from inputs as they lie: the call's
        # few steps (a small graph's call is mostly its Python).
        self.direct = sig.plain and not any(sig.input_layouts)

    def _stamp(self, args):
        return [(args[i]._version, args[i].data_ptr()) for i in self.frozen]

    def __call__(self, *args):
        return self.run(list(args))

    def run(self, args):
        """AOTAutograd's boxed convention: `args` is a list, emptied once
        read, so inputs the graph no longer needs can be freed early. The
        backend hands this method to AOTAutograd itself: one Python frame
        less per call than a wrapper around __call__."""
        if self.eager:
            return _run_eager(self.gm, args)
        if self.frozen:
            stamp = self._stamp(args)
            if stamp != self.versions:
                with _lock:
                    try:
                        self._build({i: args[i] for i in self.frozen})
                    except _compiler.CompileError as e:
                        self._dynamic_fallback(e)
                        return _run_eager(self.gm, args)
                self.versions = stamp
        # Outputs come from tcc's caching allocator (through DLPack): memory
        # already mapped, where fresh torch.empty blocks of this size would
        # fault their pages in at every call.
        if self.direct:  # the binding reads the tensors and makes the results
            outs = self.model._run_args(args, self.sig.inputs, _from_dlpack)
            args.clear()
            return outs
        sig = self.sig
        ins = [args[i] if order is None else args[i].permute(order)
               for i, order in zip(sig.inputs, sig.input_layouts)]
        outs = self.model._run_args(ins, range(len(ins)), _from_dlpack)
        if sig.plain:  # the outputs are the results, in order, row-major
            args.clear()
            return outs
        outs = list(outs)
        for k, c in sig.trims.items():  # the run's leading sizes
            outs[k] = outs[k][:int(outs[c])]
        # Complex results come as (re, im) pairs in a last dimension of 2.
        outs = [torch.view_as_complex(t) if d.is_complex else t
                for t, (d, _) in zip(outs, sig.result_types)]
        views = [t if order is None else t.permute(importer.inverse(order))
                 for t, order in zip(outs, sig.layouts)]
        results = tuple(views[o[1]] if o[0] == "result" else
                        args[o[1]] if o[0] == "input" else None
                        for o in sig.outputs)
        args.clear()
        return results

    run._boxed_call = True


# DLPack capsules straight to torch (torch.utils.dlpack.from_dlpack checks
# for other kinds of objects first).
_from_dlpack = getattr(torch._C, "_from_dlpack", torch.utils.dlpack.from_dlpack)


class _TccSupport(torch.fx.passes.operator_support.OperatorSupportBase):
    """What the table compiles, less the nodes found out while importing
    (`refused`: node name -> reason)."""

    def __init__(self, refused):
        self.refused = refused
        self.reasons = {}

    def is_node_supported(self, submodules, node):
        if node.op != "call_function":
            return False
        if node.target in ops.SIZE_ASSERTIONS or \
                node.target in ops.SIZE_ARITHMETIC:
            # Checks of a run-time size stay in eager, beside the result
            # they read (which may leave a partition): nothing to compile.
            return False
        reason = self.refused.get(node.name) or ops.unsupported_reason(node)
        if reason:
            self.reasons[node] = reason
        return reason is None


def _partitioned(gm, opts, name, frozen):
    """`gm` with each group of nodes tcc compiles replaced by a compiled
    call; the rest runs in eager. `frozen`: placeholder indices of `gm` to
    freeze (see CompiledGraph). A node the table accepts but its converter
    refuses is left out and the graph partitioned again."""
    refused = {}
    while True:
        try:
            return _partition_once(copy.deepcopy(gm), opts, name, frozen,
                                   refused)
        except Unsupported as e:
            node = getattr(e, "node", None)
            if node is None or node in refused:
                raise
            refused[node] = str(e)


def _partition_once(gm, opts, name, frozen, refused):
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.utils.fuser_utils import fuse_by_partitions

    support = _TccSupport(refused)
    partitioner = CapabilityBasedPartitioner(
        gm, support, allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    frozen_nodes = {placeholders[i] for i in frozen}
    fused = fuse_by_partitions(gm, [p.nodes for p in partitions],
                               prefix="tcc_", always_return_tuple=True)
    runners = {}
    for node in list(fused.graph.nodes):
        if node.op == "call_module" and node.target.startswith("tcc_"):
            sub = getattr(fused, node.target)
            sub_frozen = {j for j, a in enumerate(node.args)
                          if a in frozen_nodes}
            runners[node.target] = CompiledGraph(
                sub, opts, name=f"{name}_{node.target}", frozen=sub_frozen)
    for target, compiled in runners.items():
        delattr(fused, target)
        setattr(fused, target, _Module(compiled))
    for node, reason in support.reasons.items():
        stats.fallbacks.append((str(node.target), reason))
        if _logging():
            print(f"tcc: {node.target} (node '{node.name}') runs in eager: "
                  f"{reason}", file=sys.stderr)
    fused.recompile()
    return fused


class _Module(torch.nn.Module):
    """A compiled partition where the partitioned graph calls a module."""

    def __init__(self, compiled):
        super().__init__()
        self.compiled = compiled

    def forward(self, *args):
        return self.compiled(*args)


def _compile_aten(gm, example_inputs, opts, kind, marked=frozenset()):
    """An ATen graph from AOTAutograd -> what runs it. `marked`: the
    symbols of dimensions the user marked dynamic."""
    with _lock:
        stats.graphs += 1
        start = time.perf_counter()
        name = f"{kind}{stats.graphs}"
        frozen = _frozen_inputs(kind, opts)
        # AOTAutograd calls with its fake mode on; the graph's constant
        # attributes are real tensors, read here.
        try:
            with torch._subclasses.fake_tensor.unset_fake_temporarily():
                runner = _compiled_or_partitioned(gm, opts, name, frozen,
                                                  marked)
        finally:
            if _logging():
                print(f"tcc: {kind} graph of {len(gm.graph.nodes)} nodes in "
                      f"{time.perf_counter() - start:.2f} s", file=sys.stderr)
    return _boxed(runner)


def _compiled_or_partitioned(gm, opts, name, frozen, marked):
    if not any(n.op == "call_function" for n in gm.graph.nodes):
        return gm  # it returns its inputs: nothing to compile or run
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    try:
        importer.specialize_dims(placeholders, marked)
        importer.dynamic_dims(placeholders, {})
    except Unsupported as e:  # dynamic dimensions tcc does not compile
        if not opts["fallback"]:
            raise
        _graph_fallback(name, e)
        return gm
    try:
        return CompiledGraph(gm, opts, name, frozen)
    except Unsupported:
        if not opts["fallback"]:
            raise
        return _partitioned(gm, opts, name, frozen)


def _graph_fallback(name, reason):
    """Records (and with TCC_LOG, prints) a whole graph left to eager."""
    stats.fallbacks.append((f"graph {name}", str(reason)))
    if _logging():
        print(f"tcc: graph {name} runs in eager: {reason}", file=sys.stderr)


def _run_eager(gm, args):
    """A graph run by torch, with AOTAutograd's boxed convention."""
    outs = gm(*args)
    args.clear()
    return outs


def _frozen_inputs(kind, opts):
    """The inputs of an inference graph that are a module's parameters and
    buffers and that it does not write (AOTAutograd's static inputs)."""
    if kind != "inference" or not opts["freeze"]:
        return set()
    tc = torch._guards.TracingContext.try_get()
    meta = getattr(tc, "fw_metadata", None) if tc else None
    if meta is None:
        return set()
    return {i for i in meta.static_input_indices
            if not meta.input_info[i].mutates_data}


def _boxed(runner):
    if isinstance(runner, CompiledGraph):
        return runner.run

    def call(args):
        outs = runner(*args)
        args.clear()
        return outs

    call._boxed_call = True
    return call


@functools.lru_cache(maxsize=None)
def decompositions():
    """The core ATen decompositions, but for ops tcc compiles whole (one op,
    or a kernel of its own, rather than its parts)."""
    from torch._decomp import core_aten_decompositions

    table = dict(core_aten_decompositions())
    for op in list(table):
        if op in ops.TABLE and op not in _DECOMPOSED_ANYWAY:
            del table[op]
    return table


aten = torch.ops.aten
# Ops the table knows whose decomposition is as good (or needed for the
# backward graph to be expressible).
_DECOMPOSED_ANYWAY = {
    aten.linear.default, aten.t.default, aten.detach.default,
    aten.matmul.default, aten.silu.default, aten.hardswish.default,
    aten.hardsigmoid.default, aten.mse_loss.default,
    aten.mse_loss_backward.default, aten.threshold_backward.default,
}


def tcc_backend(gm, example_inputs, *, options=None, mode=None):
    """The `torch_dynamo_backends` entry point "tcc"."""
    from torch._dynamo.backends.common import aot_autograd

    opts = _options(options)
    compiler = functools.partial(_compile_aten, opts=opts,
                                 marked=_marked_dynamic(gm, example_inputs))
    return aot_autograd(
        fw_compiler=functools.partial(compiler, kind="forward"),
        bw_compiler=functools.partial(compiler, kind="backward"),
        inference_compiler=functools.partial(compiler, kind="inference"),
        decompositions=decompositions(),
    )(gm, example_inputs)


def _marked_dynamic(gm, example_inputs):
    """The symbols of the dimensions marked dynamic by the user
    (torch._dynamo.mark_dynamic on the real inputs Dynamo passes)."""
    marked = set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, real in zip(placeholders, example_inputs):
        value = node.meta.get("example_value")
        for k in getattr(real, "_dynamo_dynamic_indices", ()):
            if isinstance(value, torch.Tensor) and k < value.dim() and \
                    isinstance(value.shape[k], torch.SymInt):
                marked |= value.shape[k].node.expr.free_symbols
    return frozenset(marked)


def explain(model, *inputs, **options):
    """Runs `model` once through torch.compile with tcc and returns the ops
    that ran in eager, each with the reason: [(op, reason)]."""
    before = len(stats.fallbacks)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=tcc_backend,
                             options=dict(options, fallback=True))
    with torch.no_grad():
        compiled(*inputs)
    return list(stats.fallbacks[before:])
