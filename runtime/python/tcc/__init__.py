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

The package is the Python binding of libtccrt (the runtime), built with the
rest of tcc; see the README for how to make `import tcc` work.
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
    "Error",
    "Model",
    "TensorInfo",
    "empty_cache",
    "load",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "set_memory_limit",
]
