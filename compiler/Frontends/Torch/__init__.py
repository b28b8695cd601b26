"""tcc.torch: PyTorch's front door to tcc.

* torch.compile(model, backend="tcc") (this package's `backend`, registered
  as the `torch_dynamo_backends` entry point "tcc");
* export(model, example_inputs, "model.so"): torch.export to an artifact;
* compile_exported(exported_program): the same, loaded;
* explain(model, *inputs): which ops run in eager, and why.

See docs/torch.md.
"""

try:
    import torch as _torch
except ImportError:  # tcc.torch.torchscript still says what to install
    _torch = None

if _torch is not None:
    from .backend import explain, stats, tcc_backend
    from .export import compile_exported, export
    from .ops import Unsupported

    backend = tcc_backend
else:
    def __getattr__(name):
        raise ImportError(f"tcc.torch.{name} needs PyTorch: pip install torch")

__all__ = ["backend", "compile_exported", "explain", "export", "stats",
           "tcc_backend", "Unsupported"]
