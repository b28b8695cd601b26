"""TorchScript files to tcc.

    tcc model.pt --input-shape x=1x3x224x224 -o model.so    (the CLI)
    tcc.compile("model.pt", input_shapes={"x": [1, 3, 224, 224]})

A TorchScript file (torch.jit.trace or torch.jit.script, then .save) is
loaded with torch.jit.load, converted by torch's own TorchScript converter
(torch._export.converter) to an ExportedProgram, and imported through the
same ATen table as every other PyTorch path: one op mapping. Parameters
and buffers become the artifact's weights; the forward's tensor arguments,
by their names, its inputs (float32, shapes from --input-shape: a
TorchScript file does not fix them).

The CLI runs this module in tcc's Python environment
(`python -m tcc.torch.torchscript MODEL -o OUT.mlir`), which writes the
imported tcc IR, weights included, for the driver to compile as any .mlir
input; errors are one line on stderr and exit status 1.

Trust: torch.jit.load runs no Python code from the file, but the file
describes a program that tcc compiles and that then runs natively: compile
only files you would run (docs/security.md).
"""

import argparse
import os
import sys
import zipfile


class InputError(Exception):
    """A TorchScript file or its shapes tcc cannot take (the message says
    what is wrong)."""


def _load_module(path):
    import torch

    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise InputError(f"{path}: not a regular file")
    try:
        is_zip = zipfile.is_zipfile(path)
    except Exception:  # is_zipfile raises on some damaged archives
        is_zip = False
    if not is_zip:
        raise InputError(f"{path}: not a TorchScript file (a TorchScript "
                         "archive is a zip file; this is not one)")
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except Exception as e:  # BadZipFile, NotImplementedError (a zip
        # version it does not know), OSError...
        raise InputError(f"{path}: a damaged zip archive ({e})") from None
    if not any("/code/" in n for n in names):
        raise InputError(f"{path}: a zip archive but no TorchScript program "
                         "(no code/ in it: a state_dict or a torch.save "
                         "file? save a module with torch.jit.script or "
                         "torch.jit.trace, then .save)")
    try:
        module = torch.jit.load(path, map_location="cpu")
    except Exception as e:  # torch raises RuntimeError and others
        first = str(e).strip().splitlines()[0] if str(e).strip() else \
            type(e).__name__
        raise InputError(f"{path}: torch.jit.load cannot read it: "
                         f"{first}") from None
    if not hasattr(module, "forward"):
        raise InputError(f"{path}: the TorchScript module has no forward "
                         "method")
    return module


def _inputs(module, path, input_shapes):
    """(name, example tensor) of each argument of forward."""
    import torch

    schema = module.forward.schema
    arguments = [a for a in schema.arguments if a.name != "self"]
    names = [a.name for a in arguments]
    unknown = sorted(set(input_shapes) - set(names))
    if unknown:
        raise InputError(
            f"{path}: --input-shape names {', '.join(repr(n) for n in unknown)}"
            f", which forward does not take (its inputs: "
            f"{', '.join(names) or 'none'})")
    examples = []
    for a in arguments:
        if not isinstance(a.type, torch._C.TensorType):
            raise InputError(f"{path}: input '{a.name}' of forward is a "
                             f"{a.type}: tcc compiles tensor inputs")
        shape = input_shapes.get(a.name)
        if shape is None:
            raise InputError(f"{path}: input '{a.name}' has no shape (a "
                             "TorchScript file does not fix it): give it "
                             f"with --input-shape {a.name}=Dx..xD")
        if any(d < 0 for d in shape):
            raise InputError(f"{path}: input '{a.name}': --input-shape "
                             "takes sizes of 0 or more")
        examples.append((a.name, torch.zeros(shape)))
    return examples


def import_torchscript(path, input_shapes, name=None):
    """The tcc Graph of the TorchScript file at `path`, its inputs shaped
    by `input_shapes` ({name: [sizes]}). Raises InputError for a file or
    shapes tcc cannot take, ops.Unsupported for what tcc cannot compile."""
    import torch
    from torch._export.converter import TS2EPConverter

    from .export import import_exported
    from .ops import Unsupported

    module = _load_module(path)
    module.eval()
    examples = _inputs(module, path, dict(input_shapes or {}))
    args = tuple(t for _, t in examples)
    try:
        ep = TS2EPConverter(module, args).convert()
        # The converter leaves the leading dimension symbolic; exported
        # again, the program has the shapes asked for.
        ep = torch.export.export(ep.module(), args, strict=False)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else \
            type(e).__name__
        raise InputError(f"{path}: torch's TorchScript converter cannot "
                         f"convert the program: {first}") from None
    user = list(ep.graph_signature.user_inputs)
    if len(user) != len(examples):
        raise InputError(f"{path}: the converted program takes {len(user)} "
                         f"inputs where forward takes {len(examples)}")
    renamed = {placeholder: arg for placeholder, (arg, _) in
               zip(user, examples)}
    if name is None:
        name = os.path.splitext(os.path.basename(path))[0]
    with torch.no_grad():
        try:
            return import_exported(ep, name, input_names=renamed)[0]
        except Unsupported as e:
            where = _data_dependent_source(module) \
                if "control flow" in str(e) else ""
            if where:
                raise Unsupported(f"{e}; in the TorchScript source: "
                                  f"{where}") from None
            raise


def _data_dependent_source(module):
    """`file, line N: code` of the first `if` or loop of the TorchScript
    program that freezing (constants propagated, constant branches and
    trip counts resolved) leaves: one that depends on the data."""
    import torch

    try:
        graph = torch.jit.freeze(module).forward.graph
    except Exception:
        return ""
    for node in graph.nodes():
        if node.kind() not in ("prim::If", "prim::Loop"):
            continue
        lines = str(node.sourceRange()).splitlines()
        if len(lines) >= 2 and lines[0].strip().startswith("File "):
            return f"{lines[0].strip()[5:]}: {_code_line(lines)}"
    return ""


def _code_line(lines):
    """The statement a TorchScript source range marks (the line above its
    first ~~~ underline)."""
    for above, line in zip(lines, lines[1:]):
        if line.strip().startswith("~"):
            return above.strip()
    return lines[1].strip()


def _parse_shape(spec):
    name, _, dims = spec.partition("=")
    try:
        shape = [int(d) for d in dims.split("x")] if dims else []
    except ValueError:
        shape = None
    if not name or not dims or shape is None:
        raise InputError(f"invalid --input-shape '{spec}' (expected "
                         "NAME=DxDx...)")
    return name, shape


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tcc.torch.torchscript",
        description="Imports a TorchScript file into tcc IR (.mlir), the "
                    "weights included; `tcc model.pt` runs it.")
    parser.add_argument("model")
    parser.add_argument("-o", dest="output", required=True)
    parser.add_argument("--input-shape", action="append", default=[])
    parser.add_argument("--name")
    a = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print(f"error: {a.model}: reading a TorchScript file needs PyTorch "
              f"in tcc's Python ({sys.executable}); install it with "
              f"'{sys.executable} -m pip install torch'", file=sys.stderr)
        return 1
    import warnings

    from .. import CompileError
    from .ops import Unsupported

    warnings.simplefilter("ignore")  # torch.jit's deprecation notices
    try:
        shapes = dict(_parse_shape(s) for s in a.input_shape)
        graph = import_torchscript(a.model, shapes, a.name)
        text = graph.mlir(elide_weights=False)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Unsupported as e:  # it names the ATen op and the node
        print(f"error: {a.model}: {e}", file=sys.stderr)
        return 1
    except CompileError as e:
        print(f"error: {a.model}: {str(e).strip()}", file=sys.stderr)
        return 1
    tmp = a.output + ".part"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
