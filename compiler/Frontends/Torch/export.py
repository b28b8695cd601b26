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


def import_exported(ep, name="model", input_names=None):
    """The tcc Graph of an ExportedProgram (decomposed to core ATen first),
    with its weights as constants; `input_names` renames inputs
    (placeholder name -> artifact input name)."""
    from torch.export.graph_signature import OutputKind

    ep = ep.run_decompositions()
    for spec in ep.graph_signature.output_specs:
        if spec.kind != OutputKind.USER_OUTPUT:
            raise Unsupported(f"the program mutates '{spec.target}' (a "
                              f"{spec.kind.name}); export it in eval mode")
    graph, sig = importer.import_graph(ep.graph_module, name, _weights(ep),
                                       input_names)
    if sig.trims:
        raise Unsupported("an output's size is known only at run time (e.g. "
                          "nonzero's); an artifact's outputs have static "
                          "shapes")
    if any(o[0] != "result" for o in sig.outputs):
        raise Unsupported("an output is an input or None; an artifact's "
                          "outputs are computed tensors")
    return graph


def export(model, example_inputs, output, **options):
    """Exports `model` called on `example_inputs` with torch.export and
    compiles it to `output` (.so + .h, .o + .h, or an executable, by its
    suffix). Options as the backend's (mcpu, opt_level, ukernels,
    memory_report, emit)."""
    if isinstance(model, torch.export.ExportedProgram):
        ep = model
    else:
        if isinstance(model, torch.nn.Module):
            model = model.eval()
        ep = torch.export.export(model, tuple(example_inputs))
    name = os.path.splitext(os.path.basename(output))[0]
    graph = import_exported(ep, name)
    opts = _options(options)
    if opts["emit"]:
        _emit(graph, opts)
    compile_graph(graph, opts, output)
    return output


def compile_exported(ep, **options):
    """An ExportedProgram compiled and loaded: a tcc.Model (call it with
    NumPy arrays)."""
    opts = _options({k: v for k, v in options.items() if k != "threads"})
    graph = import_exported(ep)
    fd, path = tempfile.mkstemp(suffix=".so")
    os.close(fd)
    compile_graph(graph, opts, path)
    model = _tcc.load(path, num_threads=options.get("threads", 0))
    os.remove(path)
    header = path[:-3] + ".h"
    if os.path.exists(header):
        os.remove(header)
    return model
