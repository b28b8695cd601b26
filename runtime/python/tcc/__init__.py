"""tcc: run models compiled by the tcc tensor compiler from Python.

    import numpy as np
    import tcc

    m = tcc.load("model.so")          # made by `tcc model.onnx -o model.so`
    print(m.inputs)                   # [TensorInfo(name='x', dtype=float32, shape=(1, 3))]
    outs = m(np.ones((1, 3), np.float32))   # a list of numpy arrays

Inputs must match the model exactly: a wrong number of them or a wrong
dtype raises TypeError, a wrong shape ValueError, and failures inside the
runtime raise tcc.Error (with a `code` such as 'RESOURCE_EXHAUSTED').

Arrays returned by a model live in memory from the runtime's caching
allocator; memory_stats(), memory_summary(), empty_cache(),
reset_peak_memory_stats() and set_memory_limit() look at and steer it, as
their torch.cuda namesakes do.

Compiling from Python, in process (the compiler loads on first use, so
the runtime alone works where LLVM/MLIR are not installed):

    m = tcc.compile("model.onnx")     # or an onnx.ModelProto; a tcc.Model
    tcc.compile("model.onnx", output="model.so", mcpu="x86-64-v3")

`tcc.torch` is PyTorch's front door: torch.compile(model, backend="tcc")
and tcc.torch.export(model, inputs, "model.so"); see docs/torch.md.
"""

from ._tcc import (
    Error,
    Model,
    TensorInfo,
    empty_cache,
    load,
    memory_stats,
    memory_summary,
    reset_peak_memory_stats,
    set_memory_limit,
)

__all__ = [
    "CompileError",
    "Error",
    "Graph",
    "compile",
    "Model",
    "TensorInfo",
    "empty_cache",
    "load",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "set_memory_limit",
]


def __getattr__(name):
    # The compiler (libMLIR, libLLVM) loads only when it is asked for.
    if name in ("CompileError", "Graph"):
        from . import _compiler

        return getattr(_compiler, name)
    raise AttributeError(f"module 'tcc' has no attribute {name!r}")


def compile(model, output=None, **options):
    """Compiles `model` in process and loads it: a tcc.Model.

    `model` is a path (.onnx, .onnxtxt, .mlir, or a TorchScript .pt file,
    which needs input_shapes for its inputs) or an onnx.ModelProto.
    With `output` the artifact is written there (its suffix says what to
    make: .so, .o, or an executable) and kept; otherwise it lives in a
    temporary file. Options: mcpu, opt_level, ukernels, memory_report
    ("text"/"json"), input_shapes ({"x": [1, 3, 224, 224]}), emit, name,
    threads (per run, 0: one per online CPU). Raises tcc.CompileError with
    the compiler's diagnostics.
    """
    import os
    import tempfile

    from . import _compiler

    threads = options.pop("threads", 0)
    lib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
    options.setdefault("lib_dir", lib)
    with tempfile.TemporaryDirectory(prefix="tcc-") as tmp:
        path = model
        if not isinstance(model, (str, os.PathLike)):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
        target = output or os.path.join(tmp, "model.so")
        if os.fspath(path).endswith((".pt", ".pth", ".ts")):
            # The driver reads TorchScript with the torch frontend in a
            # child process (torch's loader crashes on some damaged
            # archives): this Python, this package.
            import sys

            options.setdefault("python", sys.executable)
            options.setdefault("python_package_dir", os.path.dirname(
                os.path.dirname(os.path.abspath(__file__))))
        _compiler.compile_file(os.fspath(path), os.fspath(target), **options)
        if output and not str(output).endswith(".so"):
            return None
        return load(os.fspath(target), num_threads=threads)

