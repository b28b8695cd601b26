"""FX graphs of ATen ops (from AOTAutograd, torch.export or TorchScript)
into the tcc dialect, through the compiler's Python binding.

The importer walks the graph once: placeholders become the function's
inputs (or, given their values, constants: an exported program's weights),
each call_function node goes through the one op table (ops.py), and the
output node becomes the function's results. Outputs that are not computed
(None, an input passed through, the same value twice) are left to the
caller, which the returned signature tells how to assemble them.
"""

import operator
from dataclasses import dataclass, field

import torch
from torch.fx.experimental.symbolic_shapes import guard_int
import torch.fx

from .. import _compiler
from . import ops
from .ops import Unsupported


@dataclass
class Signature:
    """How a compiled graph is called and its results assembled.

    `inputs`: the FX placeholder index of each artifact input, in order.
    `outputs`: for each FX output, ("result", k) the artifact's k-th output,
    ("input", i) FX placeholder i passed through, or ("none",).
    `result_types`: (torch dtype, shape) of each artifact output.
    `layouts`: for each artifact output, None, or the permutation of the
    FX value's dimensions that its memory order is: the artifact computes
    the permuted (row-major) tensor, and the caller views it back with the
    strides torch expects of that value.
    `input_layouts`: the same for each artifact input (with
    import_graph(input_layouts=True)): the artifact takes the input
    permuted so, which for a tensor with those strides is its memory as it
    lies (the caller passes `t.permute(order)`, not a copy).
    `plain`: the outputs are the results as computed, in order (the
    caller returns them as they are).
    `trims`: artifact output k -> the artifact output holding how many
    of its leading rows are the value (a result whose size only the run
    knows, aten.nonzero's: tcc computes it at its upper bound).
    `constants`: the tensors compiled in as constants (frozen inputs and
    the graph's own attributes), whose bytes key the artifact cache: the
    graph's text leaves large ones out.
    `dims`: the dynamic dimension's name -> (min, max) sizes, when the
    inputs have one (a dynamic batch): the artifact's symbol, compiled
    with `dims=` (see dynamic_dims).
    """
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    result_types: list = field(default_factory=list)
    layouts: list = field(default_factory=list)
    input_layouts: list = field(default_factory=list)
    constants: list = field(default_factory=list)
    trims: dict = field(default_factory=dict)
    dims: dict = field(default_factory=dict)
    plain: bool = False


_TORCH_DTYPES = {name: dt for dt, name in ops._DTYPES.items()}


def describe(node):
    """How diagnostics name a node: its ATen op and FX name."""
    return f"{node.target} (node '{node.name}')"


def import_graph(gm, name="graph", constants=None, input_names=None,
                 input_layouts=False, dim_names=None, dim_ranges=None,
                 computed_sizes=False):
    """Imports `gm` into a new tcc Graph; `constants` maps placeholder names
    to tensors that become constants instead of inputs, `input_names`
    placeholder names to the names the artifact gives its inputs (default:
    the placeholders' own). With `input_layouts`, an input whose example
    value is a permuted dense layout (a transposed weight a backward saved)
    is taken as its memory lies (Signature.input_layouts); else every input
    is row-major, as an exported artifact's callers pass them.
    `dim_names` maps the symbols of dynamic dimensions (their sympy
    expressions) to the names the artifact gives them (default: torch's,
    e.g. "s0"), `dim_ranges` to their sizes' ValueRanges (default: the
    shape environment's). With `computed_sizes`, an output whose size
    depends on the data (nonzero's) is the artifact's own (tcc.trim: its
    run computes and reports the size; abi.md) instead of a padded result
    and its length for the caller to cut (Signature.trims).
    Returns the Graph and its Signature. Raises Unsupported (with the node) for what tcc
    cannot compile, and tcc.CompileError for what its builder refuses."""
    constants = constants or {}
    input_names = input_names or {}
    g = _compiler.Graph(name)
    ctx = ops.Context(g)
    sig = Signature()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    index = {n: i for i, n in enumerate(placeholders)}
    sig.dims = dynamic_dims([n for n in placeholders
                             if n.name not in constants], dim_names or {},
                            dim_ranges or {})
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            _import_placeholder(ctx, node, index[node], constants, sig,
                                input_names.get(node.name, node.name),
                                input_layouts, dim_names or {})
        elif node.op == "call_function":
            _import_call(ctx, node)
        elif node.op == "output":
            _import_output(ctx, node, index, g, sig, computed_sizes)
        elif node.op == "get_attr":
            value = getattr(gm, node.target)
            if isinstance(value, torch.fx.GraphModule):
                ctx.env[node] = None  # a branch or body of control flow:
                continue  # its op says why tcc does not take it
            if not isinstance(value, torch.Tensor):
                raise Unsupported(f"attribute '{node.target}' is no tensor")
            ctx.env[node] = _constant(ctx, value, node.name)
            sig.constants.append(value)
        else:
            raise Unsupported(f"{node.op} node '{node.name}'")
    return g, sig


def _constant(ctx, tensor, name):
    t = tensor.detach().contiguous().cpu()
    dtype = ops.tcc_dtype(t.dtype)
    if dtype == "bfloat16":
        return ctx.cast(ctx.constant(t.float().numpy(), "float32", name),
                        dtype)
    return ctx.constant(t.numpy(), dtype, name)


def _is_effect_token(node):
    """Whether a placeholder is an effect token: AOTAutograd threads one
    through effectful ops (`with_effects`, e.g. torch.linalg's checks of
    its results) and passes None for it at run time."""
    return bool(node.users) and all(
        u.target is torch.ops.higher_order.with_effects and u.args[0] is node
        for u in node.users)


def _import_placeholder(ctx, node, i, constants, sig, name, layouts,
                        dim_names):
    if _is_effect_token(node):
        ctx.env[node] = None  # not an input: with_effects makes a new one
        return
    if node.name in constants:
        ctx.env[node] = _constant(ctx, constants[node.name], node.name)
        sig.constants.append(constants[node.name])
        return
    v = ops._val(node)
    if isinstance(v, torch.SymInt) and (
            ops.is_dynamic_dim(v) or v.node.maybe_as_int() is not None):
        # The size of a dynamic dimension, which Dynamo passes beside the
        # tensors: the artifact reads it from their shapes (or knows it,
        # once specialize_dims has fixed it).
        ctx.env[node] = None
        return
    if isinstance(v, torch.SymInt):
        raise Unsupported(f"input '{node.name}' is a size that depends on "
                          "the data")
    if not isinstance(v, torch.Tensor):
        raise Unsupported(f"input '{node.name}' is a {type(v).__name__}, "
                          "not a tensor")
    ctx.g.set_location(name)
    # (A complex input is its (re, im) pairs: torch's layout of it.)
    dtype, shape = ops.tcc_type(v) if v.dtype.is_complex else (
        ops.tcc_dtype(v.dtype), ops.static_shape(v.shape))
    order = _storage_order(v) if layouts and not v.dtype.is_complex \
        else None
    dims = None
    if -1 in shape:  # each named after its symbol
        dims = [_dim_name(v.shape[k], dim_names) if d == -1 else None
                for k, d in enumerate(shape)]
    if order:
        arg = ctx.g.add_input(name, dtype, [shape[d] for d in order])
        ctx.env[node] = ctx.transpose(arg, inverse(order))
    else:
        ctx.env[node] = ctx.g.add_input(name, dtype, shape, dims)
    sig.inputs.append(i)
    sig.input_layouts.append(order)


def _import_call(ctx, node):
    if node.target is operator.getitem:
        parent, k = node.args
        results = ctx.env[parent]
        ctx.env[node] = results[k] if isinstance(results, tuple) else None
        return
    reason = ops.unsupported_reason(node)
    if reason:
        raise _refused(node, reason)
    ctx.g.set_location(describe(node))
    try:
        ctx.env[node] = ops.TABLE[node.target](ctx, node)
    except Unsupported as e:
        raise _refused(node, str(e)) from None
    except _compiler.CompileError as e:
        raise _compiler.CompileError(f"{describe(node)}: {e}") from None
    _check_like_torch(node, ctx.env[node])


def _check_like_torch(node, made):
    """What a converter made has the dtypes and shapes torch recorded for
    the node: a converter that disagrees is a tcc bug, reported as an error
    rather than computed into a wrong answer."""
    want = ops._val(node)
    made_list = made if isinstance(made, tuple) else (made,)
    want_list = want if isinstance(want, (tuple, list)) else (want,)
    for k, (m, w) in enumerate(zip(made_list, want_list)):
        if m is None or not isinstance(w, torch.Tensor):
            continue
        if isinstance(m, ops.Trimmed):  # its leading size is the run's
            dtype, shape = ops.tcc_dtype(w.dtype), [int(d) for d in
                                                    w.shape[1:]]
            m = m.padded
            made_shape = list(m.shape[1:])
        else:
            dtype, shape = ops.tcc_type(w)
            made_shape = list(m.shape)
        if m.dtype != dtype or made_shape != shape:
            raise _compiler.CompileError(
                f"{describe(node)}: tcc made {m.dtype}{list(m.shape)} for "
                f"result {k}, where torch gives {dtype}{shape} (a bug of "
                "tcc's conversion)")


def _refused(node, reason):
    """Unsupported naming the node (`node` attribute: its name)."""
    e = Unsupported(f"{describe(node)}: {reason}")
    e.node = node.name
    return e


def _identifier(name):
    """`name` as a symbol's name (letters, digits and '_')."""
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else "_" + out


def _import_output(ctx, node, index, g, sig, computed_sizes=False):
    results, names, trims = [], [], []
    seen = {}
    outputs = node.args[0]
    if not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    for out in outputs:
        if out is None:
            sig.outputs.append(("none",))
        elif not isinstance(out, torch.fx.Node):
            raise Unsupported(f"an output is a {type(out).__name__}, not a "
                              "tensor")
        elif out.op == "placeholder" and out in index and \
                index[out] in sig.inputs:
            sig.outputs.append(("input", index[out]))
        else:
            value = ctx.env.get(out)
            if value is None:
                raise Unsupported(f"output '{out.name}' is not a tensor tcc "
                                  "made")
            if isinstance(value, ops.Trimmed) and computed_sizes:
                rows = list(value.padded.shape)
                value = ctx.g.op(
                    "tcc.trim", [value.padded, value.length],
                    {"dimension": 0, "name": f'"{_identifier(out.name)}"'},
                    [("int64", [-1, *rows[1:]])])[0]
                if out not in seen:
                    seen[out] = len(results)
                    results.append(value)
                    names.append(out.name)
                    sig.result_types.append((torch.int64, (-1, *rows[1:])))
                    sig.layouts.append(None)
                sig.outputs.append(("result", seen[out]))
                continue
            if isinstance(value, ops.Trimmed):
                if out not in seen:
                    seen[out] = len(results)
                    trims.append((len(results), value.length))
                    results.append(value.padded)
                    names.append(out.name)
                    sig.result_types.append(
                        (torch.int64, tuple(value.padded.shape)))
                    sig.layouts.append(None)
                sig.outputs.append(("result", seen[out]))
                continue
            if out not in seen:
                seen[out] = len(results)
                want = ops._val(out)
                order = _storage_order(want)
                if order:  # a complex value's pairs stay last
                    value = ctx.transpose(value, order + (
                        [len(order)] if want.dtype.is_complex else []))
                results.append(value)
                names.append(out.name)
                if want.dtype.is_complex:  # made as (re, im) pairs
                    sig.result_types.append((want.dtype, tuple(
                        int(d) for d in want.shape)))
                else:
                    sig.result_types.append(
                        (_TORCH_DTYPES[value.dtype], tuple(value.shape)))
                sig.layouts.append(order)
            sig.outputs.append(("result", seen[out]))
    if not results:
        raise Unsupported("the graph computes no tensor")
    # The lengths of trimmed results follow the results.
    for k, length in trims:
        sig.trims[k] = len(results)
        results.append(length)
        names.append(f"{names[k]}_length")
        sig.result_types.append((torch.int64, ()))
        sig.layouts.append(None)
    g.set_location("")
    g.set_outputs(results, names)
    sig.plain = (not sig.trims and all(o is None for o in sig.layouts) and
                 not any(d.is_complex for d, _ in sig.result_types) and
                 sig.outputs == [("result", k) for k in range(len(results))])


_MAX_DIM = 2**31 - 1  # the largest size an artifact's symbol takes


def dynamic_dims(placeholders, names, ranges=None):
    """The dynamic dimension of the graph's tensor inputs, as the artifact's
    symbol: {name: (min, max)}, or {} when every input is static. tcc
    compiles a batch (the leading dimension of the inputs that have it, run
    as slabs of fixed sizes) and one other (a sequence, run padded to
    buckets; docs/compiler.md); the compiler refuses other pairs, and a
    third is Unsupported here. `names` maps symbols to
    names (else torch's own, e.g. "s0"), `ranges` to ValueRanges (else the
    shape environment's). The bounds are torch's, but for
    a minimum of 2 (torch specializes sizes 0 and 1, where the artifact
    takes any size from 1)."""
    symbols = {}
    for node in placeholders:
        v = ops._val(node)
        if not isinstance(v, torch.Tensor):
            continue
        for k, d in enumerate(v.shape):
            if not ops.is_dynamic_dim(d):
                continue
            expr = d.node.expr
            if not expr.is_Symbol:
                raise Unsupported(
                    f"input '{node.name}' has the dynamic dimension {k} "
                    f"({expr}), a size computed from others; tcc compiles "
                    "dimensions that are a symbol of their own")
            symbols.setdefault(expr, d)
    if len(symbols) > 2:
        raise Unsupported(
            "the inputs have the dynamic dimensions " +
            ", ".join(str(s) for s in symbols) + "; tcc compiles a batch "
            "and one other dynamic dimension")
    dims = {}
    for expr, d in symbols.items():
        bounds = (ranges or {}).get(expr) or \
            d.node.shape_env.var_to_range.get(expr)
        lo, hi = 1, _MAX_DIM
        if bounds is not None:
            lower, upper = _finite(bounds.lower), _finite(bounds.upper)
            if lower is not None and lower > 2:
                lo = lower
            if upper is not None and upper < _MAX_DIM:
                hi = upper
        dims[_dim_name(d, names)] = (lo, max(lo, hi))
    return dims


def _dim_name(d, names):
    """The artifact's name of the dynamic dimension `d` (a SymInt): the
    user's (`names`: symbol -> name), else torch's own ("s0")."""
    expr = d.node.expr
    return names.get(expr, str(expr))


def specialize_dims(placeholders, marked):
    """torch.compile's dynamic dimensions that tcc does not compile as
    such, fixed at this call's sizes: every one but the batch (the leading
    dimension of the first input that has a dynamic one, when no other
    dimension uses its symbol), unless the user marked it dynamic
    (`marked`: symbols of torch._dynamo.mark_dynamic; those stay, and
    dynamic_dims refuses them). Each fixed size is a guard: torch compiles
    again when it changes, as it would without dynamic=True."""
    tensors = [v for v in map(ops._val, placeholders)
               if isinstance(v, torch.Tensor)]
    batch = next((v.shape[0].node.expr for v in tensors
                  if v.dim() and ops.is_dynamic_dim(v.shape[0])
                  and v.shape[0].node.expr.is_Symbol), None)
    if any(ops.is_dynamic_dim(d) and batch in d.node.expr.free_symbols
           for v in tensors for d in v.shape[1:]):
        batch = None  # (e.g. duck-sized with a channel count)
    for v in tensors:
        for d in v.shape:
            if ops.is_dynamic_dim(d) and not (
                    d.node.expr.free_symbols & (marked | {batch})):
                guard_int(d)


def _finite(bound):
    """A bound of torch's value ranges as an int; None for its infinities
    (sympy's oo and torch's int_oo, which int() does not take)."""
    try:
        return int(bound) if bound.is_number and bound.is_finite else None
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None


def inverse(perm):
    inverse = [0] * len(perm)
    for k, d in enumerate(perm):
        inverse[d] = k
    return inverse


def _storage_order(value):
    """The dimensions of `value` from the largest stride to the smallest,
    when its strides are a permuted dense layout other than row-major
    (e.g. a transposed view torch kept as such); else None. Torch passes
    such values to kernels that read their strides, e.g. the saved tensors
    of a backward."""
    if not isinstance(value, torch.Tensor) or value.dim() < 2 or any(
            not isinstance(d, int) for d in (*value.shape, *value.stride())):
        return None  # (a dynamic layout is taken row-major: no guards)
    shape, strides = list(value.shape), list(value.stride())
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    if order == list(range(len(shape))):
        return None
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return None  # not dense: a plain row-major result is as good
        expected *= shape[d]
    return order
