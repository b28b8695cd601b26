"""Ahead of time: torch.export to a native artifact.

    tcc.torch.export(model, (x,), "model.so")      # model.so + model.h

The program is exported with torch.export and decomposed to core ATen; its
parameters, buffers and constants become the artifact's weights, its user
inputs the artifact's inputs, and the artifact runs with the C ABI, tcc-run
or tcc.load, with no Python or torch on the machine.
"""

import os
import tempfile

import torch

from .. import _tcc
from . import importer
from .backend import _emit, _options, compile_graph
from .ops import Unsupported


def _weights(ep):
    """Placeholder name -> tensor of every lifted parameter, buffer and
    constant (zipped with the graph's placeholders: their order is the
    signature's, not params-then-buffers)."""
    from torch.export.graph_signature import InputKind

    weights = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER,
                         InputKind.CONSTANT_TENSOR):
            t = ep.state_dict.get(spec.target)
            if t is None:
                t = ep.constants[spec.target]
            weights[spec.arg.name] = t
        elif spec.kind != InputKind.USER_INPUT:
            raise Unsupported(f"input '{spec.arg.name}' is a {spec.kind.name}")
    return weights


def _dim_names(ep, dynamic_shapes, example_inputs, model):
    """The symbols of an exported program's dynamic dimensions -> the names
    of the torch.export.Dim objects that made them ("batch"), from the
    `dynamic_shapes` given for the top-level tensor inputs (a sequence in
    the inputs' order, or a dict by the forward's parameter names; each
    entry a {dim: Dim} dict or a sequence with a Dim or None per dim)."""
    if not dynamic_shapes:
        return {}
    specs = dynamic_shapes
    if isinstance(specs, dict):
        import inspect
        bound = inspect.signature(getattr(model, "forward", model)).bind(
            *example_inputs)
        specs = [dynamic_shapes.get(p) for p in bound.arguments]
    user = set(ep.graph_signature.user_inputs)
    placeholders = [n for n in ep.graph.nodes
                    if n.op == "placeholder" and n.name in user]
    names = {}
    for node, spec in zip(placeholders, specs):
        v = node.meta.get("val")
        if not isinstance(v, torch.Tensor) or not spec:
            continue
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for k, dim in items:
            name = getattr(dim, "__name__", None)
            if name and k < v.dim() and isinstance(v.shape[k], torch.SymInt):
                names.setdefault(v.shape[k].node.expr, name)
    return names


def import_exported(ep, name="model", input_names=None, dim_names=None):
    """The tcc Graph of an ExportedProgram (decomposed to core ATen first),
    with its weights as constants, and the bounds of its dynamic dimension
    (Signature.dims: {} when it has none); `input_names` renames inputs
    (placeholder name -> artifact input name), `dim_names` dynamic
    dimensions (symbol -> name, see _dim_names)."""
    from torch.export.graph_signature import OutputKind

    ep = ep.run_decompositions()
    for spec in ep.graph_signature.output_specs:
        if spec.kind != OutputKind.USER_OUTPUT:
            raise Unsupported(f"the program mutates '{spec.target}' (a "
                              f"{spec.kind.name}); export it in eval mode")
    graph, sig = importer.import_graph(ep.graph_module, name, _weights(ep),
                                       input_names, dim_names=dim_names,
                                       dim_ranges=ep.range_constraints,
                                       computed_sizes=True)
    if any(o[0] != "result" for o in sig.outputs):
        raise Unsupported("an output is an input or None; an artifact's "
                          "outputs are computed tensors")
    return graph, sig.dims


def export(model, example_inputs, output, dynamic_shapes=None, **options):
    """Exports `model` called on `example_inputs` with torch.export and
    compiles it to `output` (.so + .h, .o + .h, or an executable, by its
    suffix). `dynamic_shapes` is torch.export's: a dynamic batch
    (`{"x": {0: Dim("batch", max=64)}}`) compiles once for every size in
    its bounds, the artifact's symbol named after the Dim. Options as the
    backend's (mcpu, opt_level, ukernels, memory_report, emit)."""
    if isinstance(model, torch.export.ExportedProgram):
        ep = model
    else:
        if isinstance(model, torch.nn.Module):
            model = model.eval()
        ep = torch.export.export(model, tuple(example_inputs),
                                 dynamic_shapes=dynamic_shapes)
    name = os.path.splitext(os.path.basename(output))[0]
    graph, dims = import_exported(
        ep, name, dim_names=_dim_names(ep, dynamic_shapes, example_inputs,
                                       model))
    opts = _options(options)
    if opts["emit"]:
        _emit(graph, opts)
    compile_graph(graph, opts, output, dims)
    return output


def compile_exported(ep, **options):
    """An ExportedProgram compiled and loaded: a tcc.Model (call it with
    NumPy arrays)."""
    opts = _options({k: v for k, v in options.items() if k != "threads"})
    graph, dims = import_exported(ep)
    fd, path = tempfile.mkstemp(suffix=".so")
    os.close(fd)
    compile_graph(graph, opts, path, dims)
    model = _tcc.load(path, num_threads=options.get("threads", 0))
    os.remove(path)
    header = path[:-3] + ".h"
    if os.path.exists(header):
        os.remove(header)
    return model
