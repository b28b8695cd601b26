"""The one table from ATen ops to tcc: each entry builds one ATen node.

Every path from PyTorch (torch.compile's AOTAutograd graphs, torch.export
programs, TorchScript converted to an ExportedProgram) ends here, so there
is one op mapping. A converter receives the importer's context and the FX
node and returns the node's value (a tcc.Value), or a tuple of them for
ATen ops with several results (None where a result is not made). It raises
Unsupported with a reason for what tcc cannot compile; the partitioner asks
`unsupported_reason` first, so those nodes run in eager instead.

Result dtypes and shapes come from the node's own metadata (FakeTensor
`meta["val"]`): torch's type promotion decides the dtype, and tcc's ops
infer the same shapes (checked by the builder).
"""

import math
import operator

import numpy as np
import torch

aten = torch.ops.aten


class Unsupported(Exception):
    """A node tcc does not compile (the reason says why)."""


_DTYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}
NUMPY_DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "float16": np.float16,
    "int64": np.int64,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint8": np.uint8,
    "bool": np.bool_,
}
FLOATS = ("float32", "float64", "float16", "bfloat16")

# tcc enum cases, as MLIR attribute text.
_PREDICATES = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5}
_REDUCTIONS = {"none": 0, "sum": 1, "mean": 2}


def tcc_dtype(dtype):
    """The tcc dtype name of a torch dtype; Unsupported for others."""
    if dtype not in _DTYPES:
        raise Unsupported(f"dtype {dtype} is not supported")
    return _DTYPES[dtype]


# Complex tensors are tcc tensors of their real type with a last dimension
# of 2 (real, imaginary): torch's own memory layout of them, so a complex
# result is a view of what the artifact writes. Only converters registered
# with `complex_ok` take or make them.
_COMPLEX = {torch.complex64: "float32", torch.complex128: "float64"}


def tcc_type(t):
    """(dtype, shape) of the tcc value that holds torch tensor `t`."""
    shape = static_shape(t.shape)
    if t.dtype in _COMPLEX:
        return _COMPLEX[t.dtype], shape + [2]
    return tcc_dtype(t.dtype), shape


def enum(value):
    return f"{value} : i32"


def _val(node):
    """The FakeTensor (or tuple of them) torch recorded for a node."""
    v = node.meta.get("val")
    if v is None:
        v = node.meta.get("example_value")
    return v


def out_type(node, index=None):
    """(dtype, shape) of a node's tensor result."""
    v = _val(node)
    if index is not None:
        v = v[index]
    if not isinstance(v, torch.Tensor):
        raise Unsupported("a result is not a tensor")
    return tcc_dtype(v.dtype), static_shape(v.shape)


def static_shape(shape):
    """A torch shape as tcc's builder takes it: a size, or -1 for a dynamic
    dimension (one the graph's inputs size at run time, e.g. a dynamic
    batch: see is_dynamic_dim). A size that depends on the data is
    Unsupported."""
    dims = []
    for d in shape:
        if isinstance(d, torch.SymInt):
            known = d.node.maybe_as_int()
            if known is not None:
                d = known
            elif is_dynamic_dim(d):
                d = -1
            else:
                raise Unsupported("a dimension's size depends on the data")
        elif not isinstance(d, int):
            try:
                d = int(d)
            except Exception:
                raise Unsupported("a dimension is symbolic") from None
        dims.append(d)
    return dims


def is_dynamic_dim(d):
    """Whether `d` is a size the graph's inputs give at run time (a SymInt
    of input symbols only: a dynamic batch), rather than a fixed size or
    one that depends on the data (an unbacked symbol, nonzero's count)."""
    if not isinstance(d, torch.SymInt) or d.node.maybe_as_int() is not None:
        return False
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    return not free_unbacked_symbols(d)


def _has_run_time_size(t):
    """Whether tensor `t` has a dimension that depends on the data."""
    return any(not isinstance(d, int) and not is_dynamic_dim(d)
               and not (isinstance(d, torch.SymInt) and
                        d.node.maybe_as_int() is not None)
               for d in t.shape)


class Context:
    """What a converter builds with: the graph and the values made so far."""

    def __init__(self, graph):
        self.g = graph
        self.env = {}

    # -- values ------------------------------------------------------------
    def tensor(self, arg):
        """The tcc value of an FX argument that is a tensor."""
        import torch.fx

        if not isinstance(arg, torch.fx.Node):
            raise Unsupported(f"expected a tensor, got {type(arg).__name__}")
        v = self.env[arg]
        if v is None and isinstance(_val(arg), torch.SymInt):
            raise Unsupported(
                f"'{arg.name}' is the size of a dynamic dimension, known only "
                "at run time; tcc takes such sizes only as the shapes of "
                "view, reshape and expand")
        if v is None:
            raise Unsupported(f"'{arg.name}' has no value tcc made")
        if isinstance(v, Trimmed):
            raise Unsupported(f"'{arg.name}' has a size known only at run "
                              "time")
        return v

    def value(self, arg, dtype):
        """A tensor argument, or a Python number as a scalar of `dtype`;
        cast to `dtype`."""
        import torch.fx

        if isinstance(arg, torch.fx.Node):
            return self.cast(self.tensor(arg), dtype)
        if isinstance(arg, (bool, int, float)):
            return self.scalar(arg, dtype)
        raise Unsupported(f"an argument of type {type(arg).__name__}")

    def scalar(self, number, dtype):
        if dtype == "bfloat16":
            return self.cast(self.scalar(number, "float32"), dtype)
        return self.g.constant(
            np.array(number, dtype=NUMPY_DTYPES[dtype]), dtype)

    def constant(self, array, dtype, name=""):
        if dtype == "bfloat16":
            return self.cast(self.constant(array, "float32", name), dtype)
        # (np.ascontiguousarray would make a 0-d array 1-d.)
        return self.g.constant(
            np.asarray(array, dtype=NUMPY_DTYPES[dtype], order="C"), dtype,
            name)

    # -- ops ---------------------------------------------------------------
    def op(self, name, operands, results=None, **attrs):
        operands = list(operands)
        if name in _BOOL_AS_INT and any(v.dtype == "bool" for v in operands) \
                and attrs.get("reduction", enum(1)) != enum(0):
            return self._bool_as_int(name, operands, results, attrs)
        made = self.g.op(name, operands, attrs, results)
        return made[0] if len(made) == 1 else tuple(made)

    def _bool_as_int(self, name, operands, results, attrs):
        """An op that orders or accumulates booleans, on 0/1 int32 (max is
        or, min and prod are and, a sum is any) and its results back as
        booleans (nonzero)."""
        operands = [self.cast(v, "int32") if v.dtype == "bool" else v
                    for v in operands]
        if results is not None:
            results = [("int32" if d == "bool" else d, shape)
                       for d, shape in results]
        made = [self.cast(v, "bool") if v.dtype == "int32" else v
                for v in self.g.op(name, operands, attrs, results)]
        return made[0] if len(made) == 1 else tuple(made)

    def cast(self, v, dtype):
        if v.dtype == dtype:
            return v
        return self.op("tcc.cast", [v], results=[(dtype, v.shape)])

    def reshape(self, v, shape):
        shape = list(shape)
        if list(v.shape) == shape:
            return v
        return self.op("tcc.reshape", [v], results=[(v.dtype, shape)])

    def broadcast(self, v, shape):
        shape = list(shape)
        if list(v.shape) == shape:
            return v
        return self.op("tcc.broadcast_to", [v], results=[(v.dtype, shape)])

    def transpose(self, v, perm):
        perm = list(perm)
        if perm == list(range(len(perm))):
            return v
        return self.op("tcc.transpose", [v], perm=perm)

    def slice(self, v, offsets, steps, sizes):
        if list(sizes) == list(v.shape) and all(o == 0 for o in offsets) and \
                all(s == 1 for s in steps):
            return v
        return self.op("tcc.slice", [v], results=[(v.dtype, list(sizes))],
                       offsets=list(offsets), steps=list(steps))

    def reduce(self, kind, v, axes, keepdims):
        axes = sorted(axes)
        if not axes:
            return v
        return self.op(f"tcc.reduce_{kind}", [v], axes=axes, keepdims=keepdims)

    def binary(self, name, a, b):
        return self.op(f"tcc.{name}", [a, b])

    def unary(self, name, a):
        return self.op(f"tcc.{name}", [a])

    def compare(self, predicate, a, b):
        return self.op("tcc.cmp", [a, b], predicate=enum(_PREDICATES[predicate]))

    def select(self, cond, a, b):
        return self.op("tcc.select", [cond, a, b])

    def zeros(self, dtype, shape):
        return self.constant(np.zeros(shape), dtype)


# tcc ops that take no booleans (they order or accumulate): Context.op runs
# them on 0/1 integers (a scatter only when it reduces).
_BOOL_AS_INT = {"tcc.max", "tcc.min", "tcc.reduce_max", "tcc.reduce_min",
                "tcc.topk", "tcc.sign", "tcc.scatter", "tcc.argmax",
                "tcc.argmin"}

# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

TABLE = {}
_CHECKS = {}
COMPLEX_OK = set()  # overloads whose converters take complex tensors


def converts(*ops, check=None, complex_ok=False):
    """Registers a converter for ATen overloads (or packets: every overload);
    `complex_ok`: it takes and makes complex tensors (as (re, im) pairs)."""

    def register(fn):
        for op in ops:
            overloads = [op] if isinstance(op, torch._ops.OpOverload) else [
                getattr(op, name) for name in op.overloads()]
            for o in overloads:
                TABLE[o] = fn
                if check:
                    _CHECKS[o] = check
                if complex_ok:
                    COMPLEX_OK.add(o)
        return fn

    return register


_CONTROL_FLOW = {"cond": "an if", "while_loop": "a while loop",
                 "map": "a loop over a tensor", "scan": "a scan"}


def _source_line(node):
    """`file:line` of the Python (or TorchScript) source that made the node,
    when torch recorded it."""
    trace = node.meta.get("stack_trace") or ""
    lines = [ln.strip() for ln in trace.splitlines()
             if ln.strip().startswith("File ") and
             not ln.strip().startswith('File "<')]
    return lines[-1][5:] if lines else ""


def unsupported_reason(node):
    """None when tcc compiles `node` (an FX call_function node), else why
    not."""
    if node.target is operator.getitem:
        parent = node.args[0]
        return None if parent.target in TABLE else "its producer falls back"
    if isinstance(node.target, torch._ops.HigherOrderOperator) and \
            node.target.name() in _CONTROL_FLOW:
        where = _source_line(node)
        return (f"control flow on a tensor's value ({_CONTROL_FLOW[node.target.name()]}"
                f"{', ' + where if where else ''}): tcc compiles programs "
                "whose control flow does not depend on the data")
    if node.target not in TABLE:
        return f"{_name(node.target)} has no tcc conversion"
    if node.target in SIZE_ASSERTIONS:
        return _size_assertion_reason(node)
    if node.target in SIZE_ARITHMETIC:
        return _size_arithmetic_reason(node)
    v = _val(node)
    for t in (v if isinstance(v, (tuple, list)) else [v]):
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            return f"{_name(node.target)} gives a {type(t).__name__}"
        if t.dtype not in _DTYPES and not (
                t.dtype in _COMPLEX and node.target in COMPLEX_OK):
            return f"{_name(node.target)} gives dtype {t.dtype}"
        if _has_run_time_size(t) and not (
                makes_trimmed(node) and
                all(isinstance(d, int) for d in t.shape[1:])):
            return f"{_name(node.target)} has a symbolic shape"
    for a in node.all_input_nodes:
        av = _val(a)
        if _rowwise(node) and a is node.args[0]:
            continue
        if isinstance(av, torch.Tensor) and _has_run_time_size(av):
            return (f"{_name(node.target)} reads '{a.name}', whose size is "
                    "known only at run time (tcc returns such results, it "
                    "does not compute with them)")
        if isinstance(av, torch.Tensor) and av.dtype not in _DTYPES and \
                not (av.dtype in _COMPLEX and node.target in COMPLEX_OK):
            return f"{_name(node.target)} reads dtype {av.dtype}"
    check = _CHECKS.get(node.target)
    return check(node) if check else None


def _size_assertion_reason(node):
    """None where `node` reads the size of a Trimmed result (sym_size of
    dimension 0) or of a dynamic dimension, or compares or asserts what
    such a read gave."""
    if node.target is aten.sym_size.int:
        src, dim = node.args[0], node.args[1]
        if makes_trimmed(src) and dim == 0:
            return None
        return None if is_dynamic_dim(_val(node)) else (
            f"{_name(node.target)} of a tensor tcc does not size at run time")
    for a in node.all_input_nodes:
        if a.op == "placeholder" and is_dynamic_dim(_val(a)):
            continue
        if a.target not in SIZE_ASSERTIONS and a.target not in SIZE_ARITHMETIC:
            return (f"{_name(node.target)} of '{a.name}', which is not the "
                    "run-time size of a result")
    return None


def _name(target):
    return str(target)


def named(node):
    """The node's arguments by their schema names, defaults filled in."""
    schema = node.target._schema
    values = {}
    for i, a in enumerate(schema.arguments):
        if i < len(node.args):
            values[a.name] = node.args[i]
        elif a.name in node.kwargs:
            values[a.name] = node.kwargs[a.name]
        elif a.has_default_value():
            values[a.name] = a.default_value
        else:
            values[a.name] = None
    return values


def args(node):
    """The node's arguments in schema order, defaults filled in."""
    return list(named(node).values())


def _kwarg(node, name, default=None):
    return node.kwargs.get(name, default)


# -- elementwise ------------------------------------------------------------

def _binary(tcc_name):
    def convert(ctx, node):
        dtype, _ = out_type(node)
        a, b = node.args[0], node.args[1]
        alpha = _kwarg(node, "alpha", node.args[2] if len(node.args) > 2 else 1)
        x = ctx.value(a, dtype)
        y = ctx.value(b, dtype)
        if alpha != 1:
            y = ctx.binary("mul", y, ctx.scalar(alpha, dtype))
        if dtype == "bool":  # torch's arithmetic on bools is logic
            name = {"mul": "and", "add": "or", "max": "or",
                    "min": "and"}.get(tcc_name, tcc_name)
            return ctx.binary(name, x, y)
        return ctx.binary(tcc_name, x, y)

    return convert


converts(aten.add.Tensor, aten.add.Scalar)(_binary("add"))
converts(aten.sub.Tensor, aten.sub.Scalar)(_binary("sub"))
converts(aten.mul.Tensor, aten.mul.Scalar)(_binary("mul"))
converts(aten.maximum.default)(_binary("max"))
converts(aten.minimum.default)(_binary("min"))
converts(aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar)(_binary("pow"))
converts(aten.bitwise_and.Tensor, aten.logical_and.default)(_binary("and"))
converts(aten.bitwise_or.Tensor, aten.logical_or.default)(_binary("or"))
converts(aten.bitwise_xor.Tensor, aten.logical_xor.default)(_binary("xor"))


@converts(aten.rsub.Scalar, aten.rsub.Tensor)
def _rsub(ctx, node):
    dtype, _ = out_type(node)
    alpha = _kwarg(node, "alpha", node.args[2] if len(node.args) > 2 else 1)
    x = ctx.value(node.args[0], dtype)
    if alpha != 1:
        x = ctx.binary("mul", x, ctx.scalar(alpha, dtype))
    return ctx.binary("sub", ctx.value(node.args[1], dtype), x)


@converts(aten.pow.Scalar)
def _pow_scalar(ctx, node):
    dtype, _ = out_type(node)
    return ctx.binary("pow", ctx.value(node.args[0], dtype),
                      ctx.value(node.args[1], dtype))


def _div_check(node):
    mode = _kwarg(node, "rounding_mode")
    if mode not in (None, "trunc", "floor"):
        return f"division with rounding_mode {mode!r}"
    return None


@converts(aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode,
          aten.div.Scalar_mode, check=_div_check)
def _div(ctx, node):
    dtype, _ = out_type(node)
    mode = _kwarg(node, "rounding_mode")
    x = ctx.value(node.args[0], dtype)
    y = ctx.value(node.args[1], dtype)
    if dtype in FLOATS:
        q = ctx.binary("div", x, y)
        if mode == "trunc":
            # trunc(q): floor for q >= 0, ceil below.
            neg = ctx.compare("lt", q, ctx.scalar(0, dtype))
            q = ctx.select(neg, ctx.unary("ceil", q), ctx.unary("floor", q))
        elif mode == "floor":
            q = ctx.unary("floor", q)
        return q
    if mode is None:
        raise Unsupported("true division of integers")
    if mode == "floor":
        return _floor_divide_int(ctx, x, y, dtype)
    return ctx.binary("div", x, y)  # truncating for integers


def _floor_divide_int(ctx, x, y, dtype):
    """x // y of integers: the truncating quotient, one less where the
    signs differ and the division was inexact."""
    q = ctx.binary("div", x, y)
    r = ctx.binary("sub", x, ctx.binary("mul", q, y))
    zero = ctx.scalar(0, dtype)
    inexact = ctx.compare("ne", r, zero)
    differ = ctx.compare("ne", ctx.compare("lt", x, zero),
                         ctx.compare("lt", y, zero))
    return ctx.select(ctx.binary("and", inexact, differ),
                      ctx.binary("sub", q, ctx.scalar(1, dtype)), q)


@converts(aten.remainder.Tensor, aten.remainder.Scalar)
def _remainder(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    y = ctx.value(node.args[1], dtype)
    if dtype not in FLOATS:
        return ctx.binary("rem", x, y)  # Python's sign rule for integers
    # x - floor(x / y) * y
    return ctx.binary("sub", x, ctx.binary(
        "mul", ctx.unary("floor", ctx.binary("div", x, y)), y))


def _gcd(ctx, x, y, dtype):
    """gcd(|x|, |y|) by Euclid's algorithm, unrolled: consecutive Fibonacci
    numbers are its worst case, so log_phi(2^bits) + 2 steps reach b = 0
    for every pair of the type; once b is 0 a step changes nothing."""
    bits = 8 * np.dtype(NUMPY_DTYPES[dtype]).itemsize
    zero, one = ctx.scalar(0, dtype), ctx.scalar(1, dtype)
    a, b = ctx.unary("abs", x), ctx.unary("abs", y)
    for _ in range(math.ceil(bits / math.log2((1 + math.sqrt(5)) / 2)) + 2):
        done = ctx.compare("eq", b, zero)
        r = ctx.binary("rem", a, ctx.select(done, one, b))
        a, b = ctx.select(done, a, b), ctx.select(done, zero, r)
    return a


def _integer_check(node):
    if tcc_dtype(_val(node).dtype) in FLOATS + ("bool",):
        return f"{node.target} of {_val(node).dtype}"
    return None


@converts(aten.gcd.default, check=_integer_check)
def _gcd_op(ctx, node):
    dtype, _ = out_type(node)
    return _gcd(ctx, ctx.value(node.args[0], dtype),
                ctx.value(node.args[1], dtype), dtype)


@converts(aten.lcm.default, check=_integer_check)
def _lcm(ctx, node):
    """|x / gcd(x, y) * y|, 0 where both are 0; as C++ (torch's kernel)
    computes it, in int for narrower types, wrapped to the type after the
    abs."""
    dtype, _ = out_type(node)
    x, y = ctx.value(node.args[0], dtype), ctx.value(node.args[1], dtype)
    g = _gcd(ctx, x, y, dtype)
    zero = ctx.compare("eq", g, ctx.scalar(0, dtype))
    q = ctx.binary("div", x, ctx.select(zero, ctx.scalar(1, dtype), g))
    wide = "int32" if np.dtype(NUMPY_DTYPES[dtype]).itemsize < 4 else dtype
    m = ctx.unary("abs", ctx.binary("mul", ctx.cast(q, wide),
                                    ctx.cast(y, wide)))
    return ctx.select(zero, ctx.scalar(0, dtype), ctx.cast(m, dtype))


@converts(aten.fmod.Tensor, aten.fmod.Scalar)
def _fmod(ctx, node):
    dtype, _ = out_type(node)
    x, y = ctx.value(node.args[0], dtype), ctx.value(node.args[1], dtype)
    if dtype not in FLOATS:
        # C's %: the remainder of the truncating division, x's sign.
        return ctx.binary("sub", x, ctx.binary("mul", ctx.binary("div", x, y),
                                                y))
    return ctx.binary("rem", x, y)


def _compare(predicate):
    def convert(ctx, node):
        a, b = node.args[0], node.args[1]
        # Compare in the operands' promoted type, as torch does.
        ta = _val(a) if hasattr(a, "meta") else torch.tensor(a)
        tb = _val(b) if hasattr(b, "meta") else torch.tensor(b)
        common = tcc_dtype(torch.result_type(ta, tb))
        return ctx.compare(predicate, ctx.value(a, common),
                           ctx.value(b, common))

    return convert


for _p in ("eq", "ne", "lt", "le", "gt", "ge"):
    converts(getattr(aten, _p).Tensor, getattr(aten, _p).Scalar)(_compare(_p))


@converts(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther,
          aten.where.Scalar)
def _where(ctx, node):
    dtype, _ = out_type(node)
    cond = ctx.cast(ctx.tensor(node.args[0]), "bool")
    return ctx.select(cond, ctx.value(node.args[1], dtype),
                      ctx.value(node.args[2], dtype))


def _unary(tcc_name, floats_only=True):
    def convert(ctx, node):
        dtype, _ = out_type(node)
        if tcc_name in _ROUNDINGS and dtype not in FLOATS:
            return ctx.value(node.args[0], dtype)  # integers are whole
        if floats_only and dtype not in FLOATS:
            raise Unsupported(f"{tcc_name} of {dtype}")
        return ctx.unary(tcc_name, ctx.value(node.args[0], dtype))

    return convert


_ROUNDINGS = ("floor", "ceil", "round")


for _aten_name, _tcc_name in [
        ("exp", "exp"), ("log", "log"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"),
        ("reciprocal", "reciprocal"), ("tanh", "tanh"),
        ("sigmoid", "sigmoid"), ("erf", "erf"), ("sin", "sin"),
        ("cos", "cos"), ("tan", "tan"), ("asin", "asin"), ("acos", "acos"),
        ("atan", "atan"), ("sinh", "sinh"), ("cosh", "cosh"),
        ("asinh", "asinh"), ("acosh", "acosh"), ("atanh", "atanh"),
        ("floor", "floor"), ("ceil", "ceil"), ("round", "round")]:
    converts(getattr(aten, _aten_name).default)(_unary(_tcc_name))
converts(aten.neg.default)(_unary("neg", False))
converts(aten.abs.default)(_unary("abs", False))
converts(aten.sign.default)(_unary("sign", False))
converts(aten.relu.default)(_unary("relu", False))
converts(aten.bitwise_not.default)(_unary("not", False))


@converts(aten.logical_not.default)
def _logical_not(ctx, node):
    return ctx.unary("not", ctx.cast(ctx.tensor(node.args[0]), "bool"))


@converts(aten.trunc.default)
def _trunc(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    if dtype not in FLOATS:
        return x  # integers are whole
    neg = ctx.compare("lt", x, ctx.scalar(0, dtype))
    return ctx.select(neg, ctx.unary("ceil", x), ctx.unary("floor", x))


@converts(aten.log1p.default)
def _log1p(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    return ctx.unary("log", ctx.binary("add", x, ctx.scalar(1, dtype)))


@converts(aten.expm1.default)
def _expm1(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    return ctx.binary("sub", ctx.unary("exp", x), ctx.scalar(1, dtype))


@converts(aten.log2.default, aten.log10.default)
def _log_base(ctx, node):
    dtype, _ = out_type(node)
    base = 2.0 if node.target == aten.log2.default else 10.0
    x = ctx.value(node.args[0], dtype)
    return ctx.binary("mul", ctx.unary("log", x),
                      ctx.scalar(1.0 / math.log(base), dtype))


@converts(aten.gelu.default)
def _gelu(ctx, node):
    dtype, _ = out_type(node)
    approximate = _kwarg(node, "approximate",
                         node.args[1] if len(node.args) > 1 else "none")
    return ctx.op("tcc.gelu", [ctx.value(node.args[0], dtype)],
                  approximate=enum(1 if approximate == "tanh" else 0))


@converts(aten.silu.default)
def _silu(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    return ctx.binary("mul", x, ctx.unary("sigmoid", x))


def _clamp_to(ctx, node, x, lo, hi):
    attrs = {}
    if lo is not None:
        attrs["min"] = float(lo)
    if hi is not None:
        attrs["max"] = float(hi)
    if not attrs:
        return x
    return ctx.op("tcc.clamp", [x], **attrs)


def _clamp_check(node):
    for a in node.args[1:3]:
        if a is not None and not isinstance(a, (int, float)):
            return "clamp with tensor bounds"
    return None


@converts(aten.clamp.default, check=_clamp_check)
def _clamp(ctx, node):
    dtype, _ = out_type(node)
    a = args(node)
    return _clamp_to(ctx, node, ctx.value(a[0], dtype), a[1], a[2])


@converts(aten.clamp_min.default)
def _clamp_min(ctx, node):
    dtype, _ = out_type(node)
    return _clamp_to(ctx, node, ctx.value(node.args[0], dtype),
                     node.args[1], None)


@converts(aten.clamp_max.default)
def _clamp_max(ctx, node):
    dtype, _ = out_type(node)
    return _clamp_to(ctx, node, ctx.value(node.args[0], dtype), None,
                     node.args[1])


@converts(aten.hardtanh.default)
def _hardtanh(ctx, node):
    dtype, _ = out_type(node)
    a = args(node)
    return _clamp_to(ctx, node, ctx.value(a[0], dtype), a[1], a[2])


@converts(aten.leaky_relu.default)
def _leaky_relu(ctx, node):
    dtype, _ = out_type(node)
    a = args(node)
    x = ctx.value(a[0], dtype)
    neg = ctx.compare("lt", x, ctx.scalar(0, dtype))
    return ctx.select(neg, ctx.binary("mul", x, ctx.scalar(a[1], dtype)), x)


@converts(aten.hardsigmoid.default)
def _hardsigmoid(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    y = ctx.binary("add", ctx.binary("mul", x, ctx.scalar(1 / 6, dtype)),
                   ctx.scalar(0.5, dtype))
    return ctx.op("tcc.clamp", [y], min=0.0, max=1.0)


@converts(aten.hardswish.default)
def _hardswish(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    y = ctx.binary("add", ctx.binary("mul", x, ctx.scalar(1 / 6, dtype)),
                   ctx.scalar(0.5, dtype))
    return ctx.binary("mul", x, ctx.op("tcc.clamp", [y], min=0.0, max=1.0))


@converts(aten._to_copy.default, aten.to.dtype)
def _to_copy(ctx, node):
    dtype, _ = out_type(node)
    return ctx.cast(ctx.tensor(node.args[0]), dtype)


@converts(aten.clone.default, aten.alias.default, aten.detach.default,
          aten.lift_fresh_copy.default, aten.contiguous.default,
          aten.copy.default)
def _identity(ctx, node):
    # copy(dst, src) takes src's values.
    src = node.args[1] if node.target == aten.copy.default else node.args[0]
    dtype, shape = out_type(node)
    return ctx.broadcast(ctx.cast(ctx.tensor(src), dtype), shape)


# -- constants -------------------------------------------------------------

@converts(aten.scalar_tensor.default)
def _scalar_tensor(ctx, node):
    dtype, _ = out_type(node)
    return ctx.scalar(node.args[0], dtype)


@converts(aten.full.default, aten.full_like.default, aten.zeros.default,
          aten.ones.default, aten.zeros_like.default, aten.ones_like.default,
          aten.empty.memory_format, aten.empty_like.default,
          aten.new_zeros.default, aten.new_ones.default, aten.new_full.default,
          aten.new_empty.default)
def _full(ctx, node):
    dtype, shape = out_type(node)
    t = node.target
    if t in (aten.full.default, aten.full_like.default):
        value = node.args[1]
    elif t == aten.new_full.default:
        value = node.args[2]
    elif t in (aten.ones.default, aten.ones_like.default,
               aten.new_ones.default):
        value = 1
    else:
        value = 0  # zeros, and empty (any value will do)
    if any(d < 0 for d in shape):  # a dynamic size: the fill broadcast to it
        return ctx.broadcast(ctx.scalar(value, dtype), shape)
    return ctx.constant(np.full(shape, value), dtype)


@converts(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(ctx, node):
    dtype, shape = out_type(node)
    a = list(node.args)
    if node.target == aten.arange.default:
        start, step = 0, 1
    else:
        start = a[0]
        step = a[2] if len(a) > 2 else 1
    if shape[0] == -1:
        return _dynamic_arange(ctx, node, dtype, start, step)
    values = start + step * np.arange(shape[0], dtype=np.float64)
    return ctx.constant(values.astype(NUMPY_DTYPES.get(dtype, np.float32)),
                        dtype)


def _dynamic_arange(ctx, node, dtype, start, step):
    """arange to a dynamic size (torch.arange(x.shape[1])): the positions
    along that dimension (tcc.iota, sized where the dimension is fixed),
    scaled and shifted. Its length must be the dimension itself: a range
    of another length (arange(1, s)) has a size the graph's inputs do not
    name."""
    length = _val(node).shape[0]
    if not length.node.expr.is_Symbol:
        raise Unsupported(f"a range of {length.node.expr} elements (a size "
                          "computed from a dynamic dimension, not the "
                          "dimension itself)")
    if not all(isinstance(a, (int, float)) for a in (start, step)):
        raise Unsupported("a range to a dynamic size with a start or step "
                          "known only at run time")
    if dtype == "bool" or dtype not in NUMPY_DTYPES:
        raise Unsupported(f"a dynamic range of {dtype}")
    v = ctx.op("tcc.iota", [], results=[(dtype, [-1])], dimension=0)
    if step != 1:
        v = ctx.binary("mul", v, ctx.scalar(step, dtype))
    if start != 0:
        v = ctx.binary("add", v, ctx.scalar(start, dtype))
    return v


@converts(aten.tril_indices.default, aten.triu_indices.default)
def _tri_indices(ctx, node):
    """The 2 x N coordinates of a row x col matrix's lower (upper)
    triangle: known from the arguments alone, so a constant."""
    dtype, _ = out_type(node)
    a = named(node)
    make = (torch.tril_indices if node.target == aten.tril_indices.default
            else torch.triu_indices)
    values = make(a["row"], a["col"], a.get("offset", 0))
    return ctx.constant(values.numpy().astype(NUMPY_DTYPES[dtype]), dtype)


# -- shapes ----------------------------------------------------------------

@converts(aten.view.default, aten._unsafe_view.default, aten.reshape.default,
          aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
          aten.squeeze.default, aten.flatten.using_ints, aten.view_copy.default,
          aten.unflatten.int)
def _reshape(ctx, node):
    _, shape = out_type(node)
    return ctx.reshape(ctx.tensor(node.args[0]), shape)


@converts(aten.permute.default, aten.permute_copy.default)
def _permute(ctx, node):
    rank = len(out_type(node)[1])
    return ctx.transpose(ctx.tensor(node.args[0]),
                         [d % rank if rank else 0 for d in node.args[1]])


@converts(aten.t.default, aten.numpy_T.default)
def _t(ctx, node):
    x = ctx.tensor(node.args[0])
    return ctx.transpose(x, list(reversed(range(len(x.shape)))))


@converts(aten.transpose.int)
def _transpose(ctx, node):
    x = ctx.tensor(node.args[0])
    rank = len(x.shape)
    perm = list(range(rank))
    if rank:
        d0, d1 = node.args[1] % rank, node.args[2] % rank
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return ctx.transpose(x, perm)


@converts(aten.expand.default, aten.expand_copy.default,
          aten.broadcast_to.default)
def _expand(ctx, node):
    _, shape = out_type(node)
    return ctx.broadcast(ctx.tensor(node.args[0]), shape)


@converts(aten.slice.Tensor, aten.slice_copy.Tensor)
def _slice(ctx, node):
    a = args(node)
    x = ctx.tensor(a[0])
    rank = len(x.shape)
    dim = a[1] % rank
    n = x.shape[dim]
    start, step = a[2], a[4]
    start = 0 if start is None else start
    _, shape = out_type(node)
    if shape[dim] == -1 and n != -1:
        # A fixed dimension cut to a dynamic size (a causal mask buffer,
        # bias[:, :, :T, :T]): its first T, fixed by each padded bucket.
        length = _val(node).shape[dim]
        if start != 0 or step != 1 or not length.node.expr.is_Symbol:
            raise Unsupported(
                f"a slice of {length.node.expr} elements of a fixed "
                f"dimension of {n} (tcc takes the first elements of a "
                "dynamic dimension's size, from 0 in steps of 1)")
    start = min(max(start + n if start < 0 else start, 0), n)
    offsets = [0] * rank
    steps = [1] * rank
    offsets[dim] = start if shape[dim] else 0
    steps[dim] = step
    return ctx.slice(x, offsets, steps, shape)


@converts(aten.select.int)
def _select(ctx, node):
    x = ctx.tensor(node.args[0])
    rank = len(x.shape)
    dim = node.args[1] % rank
    index = node.args[2] % x.shape[dim]
    offsets = [0] * rank
    offsets[dim] = index
    sizes = list(x.shape)
    sizes[dim] = 1
    _, shape = out_type(node)
    return ctx.reshape(ctx.slice(x, offsets, [1] * rank, sizes), shape)


@converts(aten.cat.default, aten.concat.default)
def _cat(ctx, node):
    dtype, shape = out_type(node)
    dim = node.args[1] if len(node.args) > 1 else _kwarg(node, "dim", 0)
    # torch.cat skips empty 1-D tensors of other shapes (legacy).
    values = [ctx.cast(ctx.tensor(t), dtype) for t in node.args[0]
              if not (_val(t).dim() == 1 and _val(t).shape[0] == 0 and
                      len(shape) != 1)]
    return ctx.op("tcc.concat", values, axis=dim % len(shape))


@converts(aten.split_with_sizes.default, aten.split.Tensor,
          aten.split_with_sizes_copy.default, aten.split_copy.Tensor,
          aten.unbind.int, aten.chunk.default)
def _split(ctx, node):
    if isinstance(ctx.env.get(node.args[0]), Trimmed):  # row by row
        t = ctx.env[node.args[0]]
        dim = node.args[1] % len(t.padded.shape)
        n = t.padded.shape[dim]
        shape = list(t.padded.shape)
        pieces = ctx.op("tcc.split", [t.padded], results=[
            (t.padded.dtype, shape[:dim] + [1] + shape[dim + 1:])] * n,
            axis=dim)
        pieces = pieces if isinstance(pieces, tuple) else (pieces,)
        return tuple(Trimmed(ctx.reshape(v, shape[:dim] + shape[dim + 1:]),
                             t.length) for v in pieces)
    x = ctx.tensor(node.args[0])
    results = [out_type(node, i) for i in range(len(_val(node)))]
    if node.target == aten.unbind.int:
        dim = node.args[1] if len(node.args) > 1 else 0
    else:
        dim = node.args[2] if len(node.args) > 2 else _kwarg(node, "dim", 0)
    dim %= len(x.shape)
    pieces = []
    for dtype, shape in results:
        if node.target == aten.unbind.int:
            shape = shape[:dim] + [1] + shape[dim:]
        pieces.append((dtype, shape))
    made = ctx.op("tcc.split", [x], results=pieces, axis=dim)
    made = made if isinstance(made, tuple) else (made,)
    if node.target == aten.unbind.int:
        made = tuple(ctx.reshape(v, r[1]) for v, r in zip(made, results))
    return made


@converts(aten.index_select.default)
def _index_select(ctx, node):
    x, index = ctx.tensor(node.args[0]), ctx.tensor(node.args[2])
    _, shape = out_type(node)
    if not x.shape:  # a scalar: index holds one 0
        return ctx.reshape(x, shape)
    dim = node.args[1] % len(x.shape)
    if not index.shape:
        index = ctx.reshape(index, [1])
    return ctx.reshape(ctx.op("tcc.gather", [x, index], axis=dim), shape)


@converts(aten.embedding.default)
def _embedding(ctx, node):
    return ctx.op("tcc.gather", [ctx.tensor(node.args[0]),
                                 ctx.tensor(node.args[1])], axis=0)


def _cropped(ctx, x, pad, border=False):
    """ATen's pad list (pairs from the last dimension back) as tcc's low
    and high amounts, negative ones cropped from x first: (x, low, high).
    A `border` pad (reflect, replicate) cannot pad a dimension it cropped
    away."""
    pad = list(pad)
    rank = len(x.shape)
    low, high = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        low[rank - 1 - i], high[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    if any(p < 0 for p in low + high):
        offsets = [max(-p, 0) for p in low]
        sizes = [n - max(-lo, 0) - max(-hi, 0)
                 for n, lo, hi in zip(x.shape, low, high)]
        if border and any(n <= 0 and (lo > 0 or hi > 0)
                          for n, lo, hi in zip(sizes, low, high)):
            raise Unsupported("negative padding that crops a dimension "
                              "away and pads it again from its border")
        x = ctx.slice(x, offsets, [1] * rank, sizes)
        low = [max(p, 0) for p in low]
        high = [max(p, 0) for p in high]
    return x, low, high


@converts(aten.constant_pad_nd.default)
def _pad(ctx, node):
    dtype, _ = out_type(node)
    value = node.args[2] if len(node.args) > 2 else 0.0
    x, low, high = _cropped(ctx, ctx.tensor(node.args[0]), node.args[1])
    if all(p == 0 for p in low + high):
        return x
    return ctx.op("tcc.pad", [x], low=low, high=high, mode=enum(0),
                  value=float(value))


@converts(aten.flip.default)
def _flip(ctx, node):
    x = ctx.tensor(node.args[0])
    rank = len(x.shape)
    offsets, steps = [0] * rank, [1] * rank
    for d in node.args[1]:
        d %= rank
        if x.shape[d] > 1:
            offsets[d], steps[d] = x.shape[d] - 1, -1
    return ctx.slice(x, offsets, steps, x.shape)


@converts(aten.repeat.default)
def _repeat(ctx, node):
    x = ctx.tensor(node.args[0])
    reps = list(node.args[1])
    shape = [1] * (len(reps) - len(x.shape)) + list(x.shape)
    x = ctx.reshape(x, shape)
    # [.., n, ..] -> [.., r, n, ..] broadcast, then merged.
    inter, wide = [], []
    for r, n in zip(reps, shape):
        inter += [1, n]
        wide += [r, n]
    y = ctx.broadcast(ctx.reshape(x, inter), wide)
    return ctx.reshape(y, [r * n for r, n in zip(reps, shape)])


# -- reductions ------------------------------------------------------------

def _dims(dims, rank):
    """Sorted, normalized reduction dims; None or [] mean all."""
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % rank for d in dims})


_ALL_DIMS = (aten.sum.default, aten.mean.default, aten.prod.default,
             aten.any.default, aten.all.default)


def _reduce(kind):
    def convert(ctx, node):
        dtype, shape = out_type(node)
        a = named(node)
        x = ctx.tensor(node.args[0])
        rank = len(x.shape)
        if kind == "mean" and dtype not in FLOATS:
            raise Unsupported("mean of integers")
        x = ctx.cast(x, dtype)
        if rank == 0:
            return x
        dims = list(range(rank)) if node.target in _ALL_DIMS else _dims(
            a.get("dim"), rank)
        return ctx.reshape(
            ctx.reduce(kind, x, dims, bool(a.get("keepdim", False))), shape)

    return convert


converts(aten.sum.dim_IntList, aten.sum.default)(_reduce("sum"))
converts(aten.mean.dim, aten.mean.default)(_reduce("mean"))
converts(aten.amax.default)(_reduce("max"))
converts(aten.amin.default)(_reduce("min"))
converts(aten.prod.dim_int, aten.prod.default)(_reduce("prod"))


@converts(aten.any.dim, aten.any.dims, aten.any.default, aten.all.dim,
          aten.all.dims, aten.all.default)
def _any_all(ctx, node):
    _, shape = out_type(node)
    a = named(node)
    x = ctx.tensor(node.args[0])
    rank = len(x.shape)
    kind = "max" if node.target.overloadpacket == aten.any else "min"
    u8 = ctx.cast(ctx.cast(x, "bool"), "uint8")
    if rank == 0:
        return ctx.cast(u8, "bool")
    dims = list(range(rank)) if node.target in _ALL_DIMS else _dims(
        a.get("dim"), rank)
    r = ctx.reduce(kind, u8, dims, bool(a.get("keepdim", False)))
    return ctx.reshape(ctx.cast(r, "bool"), shape)


@converts(aten.max.dim, aten.min.dim)
def _max_dim(ctx, node):
    a = named(node)
    x = ctx.tensor(node.args[0])
    dim = a["dim"] % max(len(x.shape), 1)
    keep = bool(a["keepdim"])
    kind = "max" if node.target == aten.max.dim else "min"
    if not x.shape:  # a 0-d tensor is its own extreme, at index 0
        return x, ctx.zeros("int64", [])
    values = ctx.reduce(kind, x, [dim], keep)
    idx = ctx.op(f"tcc.arg{kind}", [x], axis=dim, keepdims=keep)
    return values, idx


@converts(aten.max.default, aten.min.default)
def _max_all(ctx, node):
    x = ctx.tensor(node.args[0])
    kind = "max" if node.target == aten.max.default else "min"
    return ctx.reduce(kind, x, list(range(len(x.shape))), False)


@converts(aten.argmax.default, aten.argmin.default)
def _argmax(ctx, node):
    _, shape = out_type(node)
    a = named(node)
    x = ctx.tensor(node.args[0])
    kind = "max" if node.target == aten.argmax.default else "min"
    dim, keep = a["dim"], bool(a["keepdim"])
    if dim is None or not x.shape:
        x = ctx.reshape(x, [math.prod(x.shape)])
        dim, keep = 0, False
    r = ctx.op(f"tcc.arg{kind}", [x], axis=dim % len(x.shape), keepdims=keep)
    return ctx.reshape(r, shape)


def _var(ctx, node, x, dims, correction, keep):
    dtype = x.dtype
    mean = ctx.reduce("mean", x, dims, True)
    d = ctx.binary("sub", x, mean)
    n = math.prod(x.shape[i] for i in dims)
    ss = ctx.reduce("sum", ctx.binary("mul", d, d), dims, keep)
    var = ctx.binary("div", ss, ctx.scalar(max(n - correction, 0), dtype))
    return var, (mean if keep else ctx.reduce("mean", x, dims, False))


@converts(aten.var.correction, aten.var.dim, aten.std.correction,
          aten.std.dim, aten.var_mean.correction)
def _var_std(ctx, node):
    a = named(node)
    x = ctx.tensor(node.args[0])
    if x.dtype not in FLOATS:
        raise Unsupported("variance of integers")
    correction = a.get("correction")
    if correction is None:
        correction = 1 if a.get("unbiased", True) else 0
    dims = _dims(a.get("dim"), len(x.shape))
    var, mean = _var(ctx, node, x, dims, correction, bool(a["keepdim"]))
    if node.target.overloadpacket == aten.std:
        return ctx.unary("sqrt", var)
    if node.target == aten.var_mean.correction:
        return var, mean
    return var


# -- contractions and NN ---------------------------------------------------

@converts(aten.mm.default, aten.bmm.default, aten.matmul.default)
def _mm(ctx, node):
    dtype, _ = out_type(node)
    return ctx.op("tcc.matmul", [ctx.value(node.args[0], dtype),
                                 ctx.value(node.args[1], dtype)])


@converts(aten.addmm.default)
def _addmm(ctx, node):
    dtype, _ = out_type(node)
    beta = _kwarg(node, "beta", 1)
    alpha = _kwarg(node, "alpha", 1)
    y = ctx.op("tcc.matmul", [ctx.value(node.args[1], dtype),
                              ctx.value(node.args[2], dtype)])
    if alpha != 1:
        y = ctx.binary("mul", y, ctx.scalar(alpha, dtype))
    if beta == 0:
        return y
    bias = ctx.value(node.args[0], dtype)
    if beta != 1:
        bias = ctx.binary("mul", bias, ctx.scalar(beta, dtype))
    return ctx.binary("add", y, bias)


@converts(aten.linear.default)
def _linear(ctx, node):
    dtype, _ = out_type(node)
    w = ctx.value(node.args[1], dtype)
    y = ctx.op("tcc.matmul", [ctx.value(node.args[0], dtype),
                              ctx.transpose(w, [1, 0])])
    bias = node.args[2] if len(node.args) > 2 else None
    return ctx.binary("add", y, ctx.value(bias, dtype)) if bias is not None \
        else y


def _conv_check(node):
    if named(node)["transposed"]:
        return "the gradient of a transposed convolution"
    return None


def _conv_attrs(stride, padding, dilation, groups, n):
    def fit(v):
        v = list(v)
        return v * n if len(v) == 1 else v
    pad = fit(padding)
    return dict(strides=fit(stride), padding=pad + pad,
                dilations=fit(dilation), groups=int(groups))


@converts(aten.convolution.default)
def _convolution(ctx, node):
    dtype, shape = out_type(node)
    a = args(node)
    x = ctx.value(a[0], dtype)
    w = ctx.value(a[1], dtype)
    n = len(w.shape) - 2
    attrs = _conv_attrs(a[3], a[4], a[5], a[8], n)
    if not a[6]:
        operands = [x, w]
        if a[2] is not None:
            operands.append(ctx.value(a[2], dtype))
        return ctx.op("tcc.conv", operands, **attrs)
    # A transposed convolution is the gradient of the convolution it
    # transposes with respect to that one's input (whose shape, output
    # padding included, is this one's result): the weight is already laid
    # out as that convolution's [in, out / groups, k...]. Where the output
    # padding makes that convolution's output longer than x, x's missing
    # tail is zeros (it reaches nothing).
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    unbatched = len(x.shape) == n + 1
    if unbatched:
        x, shape = ctx.reshape(x, [1] + list(x.shape)), [1] + list(shape)
    extra = []
    for i in range(n):
        span = attrs["dilations"][i] * (w.shape[i + 2] - 1) + 1
        size = (shape[i + 2] + 2 * attrs["padding"][i] - span) // \
            attrs["strides"][i] + 1
        extra.append(size - x.shape[i + 2])
    if any(extra):
        x = ctx.op("tcc.pad", [x], low=[0] * (n + 2), high=[0, 0] + extra,
                   mode=enum(0), value=0.0)
    probe = ctx.broadcast(ctx.scalar(0, dtype), shape)
    y, _ = ctx.g.vjp("tcc.conv", [probe, w], attrs, [x])
    if a[2] is not None:
        y = ctx.binary("add", y, _channel(ctx, ctx.value(a[2], dtype), len(shape)))
    return ctx.reshape(y, shape[1:]) if unbatched else y


@converts(aten.convolution_backward.default, check=_conv_check)
def _convolution_backward(ctx, node):
    a = args(node)
    grad, x, w = (ctx.tensor(a[i]) for i in range(3))
    n = len(x.shape) - 2
    mask = list(a[10])
    gx, gw = ctx.g.vjp("tcc.conv", [x, w],
                       _conv_attrs(a[4], a[5], a[6], a[9], n), [grad])
    gb = None
    if mask[2]:
        gb = ctx.reduce("sum", grad, [0] + list(range(2, n + 2)), False)
    return (gx if mask[0] else None, gw if mask[1] else None, gb)


def _pool_attrs(node, x, kernel, stride, padding, dilation, ceil):
    n = len(x.shape) - 2

    def fit(v, default):
        v = list(v) if v else list(default)
        return v * n if len(v) == 1 else v
    kernel = fit(kernel, [1])
    pad = fit(padding, [0])
    return dict(kernel=kernel, strides=fit(stride, kernel),
                padding=pad + pad, dilations=fit(dilation, [1]),
                ceil_mode=bool(ceil))


def _pool_check(node):
    x = _val(node.args[0])
    if x.dim() < 3:
        return "pooling without a batch dimension"
    return None


def _reads_output(node, k):
    """Whether the graph reads result `k` of the multi-result `node`."""
    return any(u.target is operator.getitem and u.args[1] == k
               for u in node.users)


def _tiled_view(xs, ys, attrs):
    """Windows that tile the input (stride = kernel, no dilation, padding or
    partial window) are axes of their own in a view of it: (the input's
    view [N, C, O1, K1, O2, K2, ..], the windows' [N, C, O1, 1, O2, 1, ..],
    the kernel's axes), or None."""
    xs, ys = list(xs), list(ys)
    n = len(xs) - 2
    if not all(s == k and d == 1 and p == 0 and q == 0 and o * k == e
               for s, k, d, p, q, o, e in zip(
                   attrs["strides"], attrs["kernel"], attrs["dilations"],
                   attrs["padding"][:n], attrs["padding"][n:], ys[2:],
                   xs[2:])):
        return None
    view, window, axes = xs[:2], ys[:2], []
    for i in range(n):
        view += [ys[2 + i], attrs["kernel"][i]]
        window += [ys[2 + i], 1]
        axes.append(3 + 2 * i)
    return view, window, axes


def _max_pool_indices(ctx, x, y, attrs):
    """PyTorch's indices of a max pooling: for each window, the flat index
    within its (batch, channel) plane of its first maximum (a NaN is a
    maximum). The taps of the kernel are visited last to first, each
    taking the index where its input equals the window's maximum."""
    xs, ys = list(x.shape), list(y.shape)
    n = len(xs) - 2
    kernel, strides, dil, pad = (attrs["kernel"], attrs["strides"],
                                 attrs["dilations"], attrs["padding"])
    plane = xs[2:]
    flat = np.arange(math.prod(plane), dtype=np.int64).reshape(plane)
    tiled = _tiled_view(xs, ys, attrs)
    if tiled is not None:
        # The first maximum has the smallest flat index among the maxima of
        # its window.
        view, window, axes = tiled
        x6 = ctx.reshape(x, view)
        hit = ctx.binary("or", ctx.compare("eq", x6, ctx.reshape(y, window)),
                         ctx.compare("ne", x6, x6))
        where = ctx.constant(flat.reshape([1, 1] + view[2:]), "int64")
        cand = ctx.select(hit, where, ctx.scalar(flat.size, "int64"))
        return ctx.reduce("min", cand, axes, keepdims=False)
    low = [0, 0] + pad[:n]
    high = [0, 0]
    for i in range(n):
        reach = (ys[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1
        high.append(max(pad[n + i], reach - xs[2 + i] - pad[i]))
    xp = ctx.op("tcc.pad", [x], low=low, high=high, mode=enum(0),
                value=float("-inf"))
    flat = np.pad(flat, [(lo, hi) for lo, hi in zip(low[2:], high[2:])])
    result = None
    for tap in reversed(list(np.ndindex(*kernel))):
        offsets = [0, 0] + [t * d for t, d in zip(tap, dil)]
        window = tuple(slice(o, o + (m - 1) * s + 1, s)
                       for o, m, s in zip(offsets[2:], ys[2:], strides))
        cand = ctx.slice(xp, offsets, [1, 1] + list(strides), ys)
        hit = ctx.binary("or", ctx.compare("eq", cand, y),
                         ctx.compare("ne", cand, cand))
        where = ctx.constant(flat[window], "int64")
        result = ctx.select(hit, where, result if result is not None else
                            ctx.scalar(0, "int64"))
    return result


@converts(aten.max_pool2d_with_indices.default, aten.max_pool2d.default,
          aten.max_pool3d_with_indices.default, check=_pool_check)
def _max_pool(ctx, node):
    a = args(node)
    x = ctx.tensor(a[0])
    attrs = _pool_attrs(node, x, a[1], a[2], a[3], a[4], a[5])
    y = ctx.op("tcc.max_pool", [x], **attrs)
    if node.target == aten.max_pool2d.default:
        return y
    # The backward recomputes what it needs from x: the indices are made
    # only for a graph that reads them (a forward saves them for backward).
    if not _reads_output(node, 1):
        return y, None
    return y, _max_pool_indices(ctx, x, y, attrs)


@converts(aten.max_pool2d_with_indices_backward.default)
def _max_pool_backward(ctx, node):
    a = args(node)
    grad, x = ctx.tensor(a[0]), ctx.tensor(a[1])
    attrs = _pool_attrs(node, x, a[2], a[3], a[4], a[5], a[6])
    view = _tiled_view(x.shape, grad.shape, attrs)
    if view is None or not isinstance(a[7], torch.fx.Node) or \
            ctx.env.get(a[7]) is None:
        # Recomputed from x: the same first maxima as the indices.
        (gx,) = ctx.g.vjp("tcc.max_pool", [x], attrs, [grad])
        return gx
    # Windows that tile the plane: each input element takes its window's
    # gradient where it is the window's index; one elementwise kernel.
    shape, window, _ = view
    where = ctx.constant(
        np.arange(math.prod(x.shape[2:]), dtype=np.int64).reshape(
            [1, 1] + shape[2:]), "int64")
    taken = ctx.compare("eq", where, ctx.reshape(ctx.tensor(a[7]), window))
    gx = ctx.select(taken, ctx.reshape(grad, window),
                    ctx.scalar(0, grad.dtype))
    return ctx.reshape(gx, x.shape)


@converts(aten.avg_pool2d.default, aten.avg_pool3d.default, check=_pool_check)
def _avg_pool(ctx, node):
    """Average pooling; with divisor_override, the window sums (the
    average counting the pads, times that count, which is static) over
    the given divisor."""
    a = args(node)
    x = ctx.tensor(a[0])
    attrs = _pool_attrs(node, x, a[1], a[2], a[3], None, a[4])
    attrs["count_include_pad"] = bool(a[5]) or a[6] is not None
    y = ctx.op("tcc.avg_pool", [x], **attrs)
    if a[6] is None:
        return y
    n = len(x.shape) - 2
    counts = np.ones([1])
    for i in range(n):
        size = x.shape[2 + i] + 2 * attrs["padding"][i]
        k, s = attrs["kernel"][i], attrs["strides"][i]
        c = np.array([min(o * s + k, size) - o * s
                      for o in range(y.shape[2 + i])], dtype=np.float64)
        counts = np.multiply.outer(counts, c)
    scale = counts.reshape(counts.shape[1:]) / float(a[6])
    return ctx.binary("mul", y, ctx.constant(scale, y.dtype))


@converts(aten.avg_pool2d_backward.default)
def _avg_pool_backward(ctx, node):
    a = args(node)
    if a[7] is not None:
        raise Unsupported("avg_pool2d with divisor_override")
    grad, x = ctx.tensor(a[0]), ctx.tensor(a[1])
    attrs = _pool_attrs(node, x, a[2], a[3], a[4], None, a[5])
    attrs["count_include_pad"] = bool(a[6])
    (gx,) = ctx.g.vjp("tcc.avg_pool", [x], attrs, [grad])
    return gx


def _adaptive_windows(size, out):
    """The windows [start, end) of adaptive pooling of `size` to `out`."""
    return [((i * size) // out, -((-(i + 1) * size) // out))
            for i in range(out)]


def _adaptive_reduce(ctx, x, axis, out, kind):
    """x reduced (sum or max) over each adaptive window along `axis`."""
    size = x.shape[axis]
    parts = []
    for start, end in _adaptive_windows(size, out):
        offsets = [0] * len(x.shape)
        offsets[axis] = start
        sizes = list(x.shape)
        sizes[axis] = end - start
        parts.append(ctx.reduce(kind, ctx.slice(x, offsets, [1] * len(sizes),
                                                sizes), [axis], True))
    return parts[0] if len(parts) == 1 else ctx.op("tcc.concat", parts,
                                                   axis=axis)


_ADAPTIVE_LIMIT = 1024  # windows a dimension may unroll into


def _adaptive_check(node):
    x = _val(node.args[0])
    size = list(node.args[1])
    if any(o > _ADAPTIVE_LIMIT for o in size):
        return f"adaptive pooling to more than {_ADAPTIVE_LIMIT} windows a side"
    if 0 in x.shape[-len(size):] and 0 not in size:
        return "adaptive pooling of an empty input"
    return None


@converts(aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default,
          aten._adaptive_avg_pool3d.default, aten.adaptive_avg_pool3d.default,
          check=_adaptive_check)
def _adaptive_avg_pool(ctx, node):
    """One average pool when the windows tile the input; else each
    dimension summed over its windows in turn, divided by the areas."""
    dtype, shape = out_type(node)
    x = ctx.tensor(node.args[0])
    size = list(node.args[1])
    rank = len(x.shape)
    first = rank - len(size)
    spatial = list(x.shape[first:])
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    if all(o == 1 for o in size):
        return ctx.reduce("mean", x, list(range(first, rank)), True)
    if not any(s % o for s, o in zip(spatial, size)) and first == 2:
        k = [s // o for s, o in zip(spatial, size)]
        return ctx.op("tcc.avg_pool", [x], kernel=k, strides=k,
                      padding=[0] * (2 * len(k)), dilations=[1] * len(k))
    area = np.ones([1], dtype=np.float64)
    for i, (s, o) in enumerate(zip(spatial, size)):
        x = _adaptive_reduce(ctx, x, first + i, o, "sum")
        lengths = np.array([e - b for b, e in _adaptive_windows(s, o)],
                           dtype=np.float64)
        area = np.multiply.outer(area, lengths) if i else lengths
    return ctx.binary("div", x, ctx.constant(area, dtype))


@converts(aten.adaptive_max_pool2d.default, aten.adaptive_max_pool3d.default,
          check=_adaptive_check)
def _adaptive_max_pool(ctx, node):
    """Each window's maximum and the flat index in its plane of its first
    occurrence (row-major), one dimension at a time from the last: a
    window's first maximum lies in the first of its rows whose maximum
    is the window's."""
    dtype, shape = out_type(node, 0)
    x = ctx.tensor(node.args[0])
    size = list(node.args[1])
    rank = len(x.shape)
    first = rank - len(size)
    spatial = list(x.shape[first:])
    if 0 in shape:
        return ctx.zeros(dtype, shape), ctx.zeros("int64", shape)
    values, flat = x, None
    for i in reversed(range(len(size))):
        axis = first + i
        stride = math.prod(spatial[i + 1:])
        vparts, iparts = [], []
        for start, end in _adaptive_windows(spatial[i], size[i]):
            offsets = [0] * rank
            offsets[axis] = start
            sizes = list(values.shape)
            sizes[axis] = end - start
            window = ctx.slice(values, offsets, [1] * rank, sizes)
            vparts.append(ctx.reduce("max", window, [axis], True))
            at = ctx.op("tcc.argmax", [window], axis=axis, keepdims=True)
            pos = ctx.binary("mul", ctx.binary("add", at, ctx.scalar(
                start, "int64")), ctx.scalar(stride, "int64"))
            if flat is not None:
                inner = ctx.slice(flat, offsets, [1] * rank, sizes)
                pos = ctx.binary("add", pos, _pick(ctx, inner, at, axis))
            iparts.append(pos)
        cat = (lambda parts: parts[0] if len(parts) == 1 else
               ctx.op("tcc.concat", parts, axis=axis))
        values, flat = cat(vparts), cat(iparts)
    return values, flat


def _channel(ctx, v, rank):
    """A C-vector shaped to broadcast along dimension 1."""
    return ctx.reshape(v, [1, v.shape[0]] + [1] * (rank - 2))


@converts(aten._native_batch_norm_legit_no_training.default)
def _batch_norm_inference(ctx, node):
    dtype, shape = out_type(node, 0)
    x, w, b, mean, var = (ctx.value(node.args[i], dtype) if node.args[i]
                          is not None else None for i in range(5))
    eps = node.args[6]
    c = x.shape[1]
    w = w if w is not None else ctx.constant(np.ones([c]), dtype)
    b = b if b is not None else ctx.constant(np.zeros([c]), dtype)
    y = ctx.op("tcc.batch_norm", [x, w, b, mean, var], epsilon=float(eps))
    return y, ctx.zeros(dtype, out_type(node, 1)[1]), \
        ctx.zeros(dtype, out_type(node, 2)[1])


def _batch_stats(ctx, x):
    rank = len(x.shape)
    axes = [0] + list(range(2, rank))
    mean = ctx.reduce("mean", x, axes, True)
    d = ctx.binary("sub", x, mean)
    var = ctx.reduce("mean", ctx.binary("mul", d, d), axes, True)
    return axes, mean, d, var


@converts(aten._native_batch_norm_legit_functional.default,
          aten._native_batch_norm_legit.default, aten.native_batch_norm.default)
def _batch_norm_training(ctx, node):
    dtype, _ = out_type(node, 0)
    functional = node.target == aten._native_batch_norm_legit_functional.default
    return _batch_norm(ctx, dtype, list(node.args), functional)


@converts(aten._batch_norm_with_update_functional.default)
def _batch_norm_with_update(ctx, node):
    """Training batch norm with the running statistics updated: the
    normalized input, the batch's mean and 1/std, an empty reserve, then
    the new running mean and variance."""
    dtype, _ = out_type(node, 0)
    a = args(node)
    y, mean, rstd, rm, rv = _batch_norm(ctx, dtype, a[:5] + [True] + a[5:7],
                                        True)
    return y, mean, rstd, ctx.zeros("uint8", [0]), rm, rv


def _batch_norm(ctx, dtype, a, functional):
    """Batch norm of `a` = (input, weight, bias, running mean, running var,
    training, momentum, eps); with `functional` the new running statistics
    follow the three results."""
    x = ctx.value(a[0], dtype)
    w = ctx.value(a[1], dtype) if a[1] is not None else None
    b = ctx.value(a[2], dtype) if a[2] is not None else None
    rm = ctx.value(a[3], dtype) if a[3] is not None else None
    rv = ctx.value(a[4], dtype) if a[4] is not None else None
    training, momentum, eps = a[5], a[6], a[7]
    rank = len(x.shape)
    c = x.shape[1]
    if not training:
        w = w if w is not None else ctx.constant(np.ones([c]), dtype)
        b = b if b is not None else ctx.constant(np.zeros([c]), dtype)
        y = ctx.op("tcc.batch_norm", [x, w, b, rm, rv], epsilon=float(eps))
        outs = [y, ctx.zeros(dtype, [0]), ctx.zeros(dtype, [0])]
        if functional:
            outs += [rm, rv]
        return tuple(outs)
    axes, mean, d, var = _batch_stats(ctx, x)
    rstd = ctx.unary("rsqrt", ctx.binary("add", var, ctx.scalar(eps, dtype)))
    y = ctx.binary("mul", d, rstd)
    if w is not None:
        y = ctx.binary("mul", y, _channel(ctx, w, rank))
    if b is not None:
        y = ctx.binary("add", y, _channel(ctx, b, rank))
    mean_c = ctx.reshape(mean, [c])
    rstd_c = ctx.reshape(rstd, [c])
    outs = [y, mean_c, rstd_c]
    if functional:
        n = math.prod(x.shape) // c
        unbiased = ctx.binary("mul", ctx.reshape(var, [c]),
                              ctx.scalar(n / max(n - 1, 1), dtype))
        keep = ctx.scalar(1 - momentum, dtype)
        take = ctx.scalar(momentum, dtype)
        outs.append(ctx.binary("add", ctx.binary("mul", rm, keep),
                               ctx.binary("mul", mean_c, take)))
        outs.append(ctx.binary("add", ctx.binary("mul", rv, keep),
                               ctx.binary("mul", unbiased, take)))
    return tuple(outs)


@converts(aten.native_batch_norm_backward.default)
def _batch_norm_backward(ctx, node):
    a = list(node.args)
    g, x = ctx.tensor(a[0]), ctx.tensor(a[1])
    dtype = x.dtype
    w = ctx.value(a[2], dtype) if a[2] is not None else None
    rm = ctx.value(a[3], dtype) if a[3] is not None else None
    rv = ctx.value(a[4], dtype) if a[4] is not None else None
    save_mean = a[5]
    save_rstd = a[6]
    training, eps, mask = a[7], a[8], list(a[9])
    rank = len(x.shape)
    c = x.shape[1]
    axes = [0] + list(range(2, rank))
    n = math.prod(x.shape) // c
    if training:
        mean = _channel(ctx, ctx.tensor(save_mean), rank)
        rstd = _channel(ctx, ctx.tensor(save_rstd), rank)
    else:
        mean = _channel(ctx, rm, rank)
        rstd = _channel(ctx, ctx.unary("rsqrt", ctx.binary(
            "add", rv, ctx.scalar(eps, dtype))), rank)
    xhat = ctx.binary("mul", ctx.binary("sub", x, mean), rstd)
    gsum = ctx.reduce("sum", g, axes, True)
    gxsum = ctx.reduce("sum", ctx.binary("mul", g, xhat), axes, True)
    scale = rstd if w is None else ctx.binary("mul", rstd,
                                              _channel(ctx, w, rank))
    gx = None
    if mask[0]:
        if training:
            inner = ctx.binary("sub", ctx.binary("sub", g, ctx.binary(
                "mul", gsum, ctx.scalar(1.0 / n, dtype))), ctx.binary(
                "mul", xhat, ctx.binary("mul", gxsum,
                                        ctx.scalar(1.0 / n, dtype))))
            gx = ctx.binary("mul", inner, scale)
        else:
            gx = ctx.binary("mul", g, scale)
    gw = ctx.reshape(gxsum, [c]) if mask[1] else None
    gb = ctx.reshape(gsum, [c]) if mask[2] else None
    return gx, gw, gb


@converts(aten.native_layer_norm.default)
def _layer_norm(ctx, node):
    dtype, _ = out_type(node, 0)
    x = ctx.value(node.args[0], dtype)
    normalized = list(node.args[1])
    w = ctx.value(node.args[2], dtype) if node.args[2] is not None else None
    b = ctx.value(node.args[3], dtype) if node.args[3] is not None else None
    eps = node.args[4]
    rank = len(x.shape)
    axis = rank - len(normalized)
    axes = list(range(axis, rank))

    def statistics():
        mean = ctx.reduce("mean", x, axes, True)
        d = ctx.binary("sub", x, mean)
        var = ctx.reduce("mean", ctx.binary("mul", d, d), axes, True)
        rstd = ctx.unary("rsqrt", ctx.binary("add", var, ctx.scalar(eps,
                                                                    dtype)))
        return mean, d, rstd
    if eps < 0 or not normalized or 0 in x.shape:
        # What tcc.layer_norm does not take (a negative epsilon, nothing to
        # normalize over), spelled out.
        mean, d, rstd = statistics()
        y = ctx.binary("mul", d, rstd)
        if w is not None:
            y = ctx.binary("mul", y, w)
        if b is not None:
            y = ctx.binary("add", y, b)
        return y, mean, rstd
    scale = w if w is not None else ctx.constant(np.ones(normalized), dtype)
    operands = [x, scale] + ([b] if b is not None else [])
    y = ctx.op("tcc.layer_norm", operands, axis=axis, epsilon=float(eps))
    if not (_reads_output(node, 1) or _reads_output(node, 2)):
        return y, None, None
    mean, _, rstd = statistics()
    return y, mean, rstd


@converts(aten.native_layer_norm_backward.default)
def _layer_norm_backward(ctx, node):
    a = list(node.args)
    g, x = ctx.tensor(a[0]), ctx.tensor(a[1])
    dtype = x.dtype
    normalized = list(a[2])
    mean, rstd = ctx.tensor(a[3]), ctx.tensor(a[4])
    w = ctx.value(a[5], dtype) if a[5] is not None else None
    mask = list(a[7])
    rank = len(x.shape)
    axis = rank - len(normalized)
    axes = list(range(axis, rank))
    lead = list(range(axis))
    n = math.prod(normalized)
    xhat = ctx.binary("mul", ctx.binary("sub", x, mean), rstd)
    gy = g if w is None else ctx.binary("mul", g, w)
    gx = None
    if mask[0]:
        s1 = ctx.reduce("sum", gy, axes, True)
        s2 = ctx.reduce("sum", ctx.binary("mul", gy, xhat), axes, True)
        inner = ctx.binary("sub", ctx.binary(
            "sub", ctx.binary("mul", gy, ctx.scalar(n, dtype)), s1),
            ctx.binary("mul", xhat, s2))
        gx = ctx.binary("mul", inner, ctx.binary(
            "mul", rstd, ctx.scalar(1.0 / n, dtype)))
    gw = ctx.reduce("sum", ctx.binary("mul", g, xhat), lead, False) \
        if mask[1] and w is not None else None
    gb = ctx.reduce("sum", g, lead, False) if mask[2] and a[6] is not None \
        else None
    return gx, gw, gb


def _softmax_like(tcc_name):
    def convert(ctx, node):
        dtype, _ = out_type(node)
        x = ctx.value(node.args[0], dtype)
        dim = node.args[1] % max(len(x.shape), 1)
        if not x.shape:
            y = ctx.op(f"tcc.{tcc_name}", [ctx.reshape(x, [1])], axis=0)
            return ctx.reshape(y, [])
        return ctx.op(f"tcc.{tcc_name}", [x], axis=dim)

    return convert


converts(aten._softmax.default, aten.softmax.int)(_softmax_like("softmax"))
converts(aten._log_softmax.default, aten.log_softmax.int)(
    _softmax_like("log_softmax"))


@converts(aten._softmax_backward_data.default)
def _softmax_backward(ctx, node):
    g, y = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    dim = node.args[2] % len(y.shape)
    s = ctx.reduce("sum", ctx.binary("mul", g, y), [dim], True)
    return ctx.binary("mul", y, ctx.binary("sub", g, s))


@converts(aten._log_softmax_backward_data.default)
def _log_softmax_backward(ctx, node):
    g, y = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    dim = node.args[2] % len(y.shape)
    s = ctx.reduce("sum", g, [dim], True)
    return ctx.binary("sub", g, ctx.binary("mul", ctx.unary("exp", y), s))


@converts(aten.threshold_backward.default)
def _threshold_backward(ctx, node):
    g, x = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    keep = ctx.compare("gt", x, ctx.scalar(node.args[2], x.dtype))
    return ctx.select(keep, g, ctx.scalar(0, g.dtype))


@converts(aten.tanh_backward.default)
def _tanh_backward(ctx, node):
    g, y = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    one = ctx.scalar(1, y.dtype)
    return ctx.binary("mul", g, ctx.binary("sub", one, ctx.binary("mul", y, y)))


@converts(aten.sigmoid_backward.default)
def _sigmoid_backward(ctx, node):
    g, y = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    one = ctx.scalar(1, y.dtype)
    return ctx.binary("mul", g, ctx.binary("mul", y, ctx.binary("sub", one, y)))


@converts(aten.gelu_backward.default)
def _gelu_backward(ctx, node):
    g, x = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    approximate = _kwarg(node, "approximate",
                         node.args[2] if len(node.args) > 2 else "none")
    (gx,) = ctx.g.vjp("tcc.gelu", [x],
                      {"approximate": enum(1 if approximate == "tanh" else 0)},
                      [g])
    return gx


@converts(aten.hardtanh_backward.default)
def _hardtanh_backward(ctx, node):
    g, x = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    lo, hi = node.args[2], node.args[3]
    inside = ctx.binary("and",
                        ctx.compare("gt", x, ctx.scalar(lo, x.dtype)),
                        ctx.compare("lt", x, ctx.scalar(hi, x.dtype)))
    return ctx.select(inside, g, ctx.scalar(0, g.dtype))


@converts(aten.embedding_dense_backward.default)
def _embedding_backward(ctx, node):
    g, idx = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    num_weights, padding_idx = node.args[2], node.args[3]
    if node.args[4]:
        raise Unsupported("embedding backward with scale_grad_by_freq")
    dim = g.shape[-1]
    count = math.prod(idx.shape)
    rows = ctx.reshape(g, [count, dim])
    flat = ctx.cast(ctx.reshape(idx, [count]), "int64")
    if padding_idx is not None and padding_idx >= 0:
        keep = ctx.compare("ne", flat, ctx.scalar(padding_idx, "int64"))
        rows = ctx.select(ctx.reshape(keep, [count, 1]), rows,
                          ctx.scalar(0, rows.dtype))
    where = ctx.broadcast(ctx.reshape(flat, [count, 1]), [count, dim])
    zeros = ctx.zeros(g.dtype, [num_weights, dim])
    return ctx.op("tcc.scatter", [zeros, where, rows], axis=0,
                  reduction=enum(1))


@converts(aten.nll_loss_forward.default)
def _nll_loss(ctx, node):
    dtype, _ = out_type(node, 0)
    x = ctx.tensor(node.args[0])
    target = ctx.cast(ctx.tensor(node.args[1]), "int64")
    weight = ctx.tensor(node.args[2]) if node.args[2] is not None else None
    reduction = ["none", "mean", "sum"][node.args[3]]
    ignore = node.args[4]
    if len(x.shape) == 1:
        x = ctx.reshape(x, [1, x.shape[0]])
        target = ctx.reshape(target, [1])
    operands = [x, target] + ([weight] if weight is not None else [])
    attrs = {"reduction": enum(_REDUCTIONS[reduction])}
    if ignore is not None and ignore >= -(2 ** 63):
        attrs["ignore_index"] = ignore
    loss = ctx.op("tcc.nll_loss", operands, **attrs)
    _, shape = out_type(node, 0)
    loss = ctx.reshape(loss, shape)
    # total_weight: only the backward of a mean reads it (as a count).
    return loss, ctx.zeros(dtype, out_type(node, 1)[1])


@converts(aten.nll_loss_backward.default)
def _nll_loss_backward(ctx, node):
    g, x = ctx.tensor(node.args[0]), ctx.tensor(node.args[1])
    target = ctx.cast(ctx.tensor(node.args[2]), "int64")
    weight = ctx.tensor(node.args[3]) if node.args[3] is not None else None
    reduction = ["none", "mean", "sum"][node.args[4]]
    ignore = node.args[5]
    shape = x.shape
    if len(shape) == 1:
        x = ctx.reshape(x, [1, shape[0]])
        target = ctx.reshape(target, [1])
        g = ctx.reshape(g, [1]) if reduction == "none" else g
    operands = [x, target] + ([weight] if weight is not None else [])
    attrs = {"reduction": enum(_REDUCTIONS[reduction])}
    if ignore is not None and ignore >= -(2 ** 63):
        attrs["ignore_index"] = ignore
    grads = ctx.g.vjp("tcc.nll_loss", operands, attrs, [g])
    return ctx.reshape(grads[0], shape)


@converts(aten.mse_loss.default)
def _mse_loss(ctx, node):
    dtype, _ = out_type(node)
    a = args(node)
    d = ctx.binary("sub", ctx.value(a[0], dtype), ctx.value(a[1], dtype))
    sq = ctx.binary("mul", d, d)
    rank = len(sq.shape)
    if a[2] == 0:
        return sq
    kind = "mean" if a[2] == 1 else "sum"
    return ctx.reduce(kind, sq, list(range(rank)), False) if rank else sq


@converts(aten.mse_loss_backward.default)
def _mse_loss_backward(ctx, node):
    g, x, y = (ctx.tensor(node.args[i]) for i in range(3))
    reduction = node.args[3]
    scale = 2.0 / math.prod(x.shape) if reduction == 1 else 2.0
    d = ctx.binary("sub", x, y)
    return ctx.binary("mul", ctx.binary("mul", d, ctx.scalar(scale, x.dtype)),
                      g)


# -- fused transformer ops (PyTorch's inference fast paths) -----------------

def _linear_to(ctx, x, w, b):
    """x @ w^T + b over the last dimension of x (any leading dimensions)."""
    y = ctx.op("tcc.matmul", [x, ctx.transpose(w, [1, 0])])
    return ctx.binary("add", y, b) if b is not None else y


def _attention(ctx, q, k, v, heads, mask=None):
    """Scaled dot-product attention of [B, S, E] projections, `heads` heads
    of E / heads each; gives [B, S, E]."""
    b, s, e = q.shape
    d = e // heads

    def split(t):
        return ctx.transpose(ctx.reshape(t, [b, t.shape[1], heads, d]),
                             [0, 2, 1, 3])

    qh, kh, vh = split(q), split(k), split(v)
    scores = ctx.op("tcc.matmul", [qh, ctx.transpose(kh, [0, 1, 3, 2])])
    scores = ctx.binary("mul", scores, ctx.scalar(1.0 / math.sqrt(d),
                                                  scores.dtype))
    if mask is not None:
        scores = ctx.binary("add", scores, mask)
    probs = ctx.op("tcc.softmax", [scores], axis=3)
    out = ctx.op("tcc.matmul", [probs, vh])
    return ctx.reshape(ctx.transpose(out, [0, 2, 1, 3]), [b, s, e])


def _encoder_check(node):
    a = named(node)
    if a["mask"] is not None:
        return "the fused encoder layer with a mask"
    if _val(node.args[0]).dim() != 3:
        return "the fused encoder layer on a nested or unbatched input"
    return None


@converts(aten._transformer_encoder_layer_fwd.default, check=_encoder_check)
def _encoder_layer(ctx, node):
    a = named(node)
    dtype, _ = out_type(node)

    def t(name):
        return ctx.value(a[name], dtype)

    x = ctx.value(a["src"], dtype)
    e, heads, eps = a["embed_dim"], a["num_heads"], float(a["eps"])

    def norm(v, i):
        return ctx.op("tcc.layer_norm", [v, t(f"norm_weight_{i}"),
                                         t(f"norm_bias_{i}")],
                      axis=2, epsilon=eps)

    def attention(v):
        qkv = _linear_to(ctx, v, t("qkv_weight"), t("qkv_bias"))
        b, s, _ = qkv.shape
        q, k, w = (ctx.slice(qkv, [0, 0, i * e], [1, 1, 1], [b, s, e])
                   for i in range(3))
        return _linear_to(ctx, _attention(ctx, q, k, w, heads),
                          t("proj_weight"), t("proj_bias"))

    def feed_forward(v):
        h = _linear_to(ctx, v, t("ffn_weight_1"), t("ffn_bias_1"))
        h = ctx.op("tcc.gelu", [h]) if a["use_gelu"] else ctx.unary("relu", h)
        return _linear_to(ctx, h, t("ffn_weight_2"), t("ffn_bias_2"))

    if a["norm_first"]:
        x = ctx.binary("add", x, attention(norm(x, 1)))
        return ctx.binary("add", x, feed_forward(norm(x, 2)))
    x = norm(ctx.binary("add", x, attention(x)), 1)
    return norm(ctx.binary("add", x, feed_forward(x)), 2)


def _sdpa_check(node):
    a = named(node)
    if a.get("dropout_p"):
        return "attention with dropout"
    if a.get("attn_mask") is not None:
        return "attention with a mask (the causal flag is supported)"
    if _val(node.args[0]).dim() != 4:
        return "attention on tensors other than [B, H, L, E]"
    return None


def _scores(ctx, a, q, k):
    """scale * q @ k^T, the causal positions -inf."""
    scale = a.get("scale") or 1.0 / math.sqrt(q.shape[-1])
    s = ctx.op("tcc.matmul", [q, ctx.transpose(k, [0, 1, 3, 2])])
    s = ctx.binary("mul", s, ctx.scalar(scale, s.dtype))
    if a.get("is_causal"):
        l, n = s.shape[2], s.shape[3]
        keep = np.tril(np.ones((l, n), dtype=bool))
        s = ctx.select(ctx.constant(keep, "bool"), s,
                       ctx.scalar(float("-inf"), s.dtype))
    return s, scale


@converts(aten._scaled_dot_product_flash_attention_for_cpu.default,
          check=_sdpa_check)
def _flash_attention(ctx, node):
    a = named(node)
    dtype, _ = out_type(node, 0)
    q, k, v = (ctx.value(a[n], dtype) for n in ("query", "key", "value"))
    s, _ = _scores(ctx, a, q, k)
    if not _reads_output(node, 1):  # inference: no logsumexp to save
        p = ctx.op("tcc.softmax", [s], axis=3)
        return ctx.op("tcc.matmul", [p, v]), None
    m = ctx.reduce("max", s, [3], True)
    lse = ctx.binary("add", ctx.unary("log", ctx.reduce(
        "sum", ctx.unary("exp", ctx.binary("sub", s, m)), [3], True)), m)
    p = ctx.unary("exp", ctx.binary("sub", s, lse))
    out = ctx.op("tcc.matmul", [p, v])
    return out, ctx.reshape(lse, lse.shape[:3])


@converts(aten._scaled_dot_product_flash_attention_for_cpu_backward.default,
          check=_sdpa_check)
def _flash_attention_backward(ctx, node):
    a = named(node)
    g = ctx.tensor(a["grad_out"])
    q, k, v, out = (ctx.tensor(a[n]) for n in ("query", "key", "value",
                                                "out"))
    lse = ctx.tensor(a["logsumexp"])
    s, scale = _scores(ctx, a, q, k)
    p = ctx.unary("exp", ctx.binary("sub", s, ctx.reshape(
        lse, list(lse.shape) + [1])))
    dv = ctx.op("tcc.matmul", [ctx.transpose(p, [0, 1, 3, 2]), g])
    dp = ctx.op("tcc.matmul", [g, ctx.transpose(v, [0, 1, 3, 2])])
    rows = ctx.reduce("sum", ctx.binary("mul", g, out), [3], True)
    ds = ctx.binary("mul", p, ctx.binary("sub", dp, rows))
    ds = ctx.binary("mul", ds, ctx.scalar(scale, ds.dtype))
    dq = ctx.op("tcc.matmul", [ds, k])
    dk = ctx.op("tcc.matmul", [ctx.transpose(ds, [0, 1, 3, 2]), q])
    return dq, dk, dv


# -- more elementwise --------------------------------------------------------

converts(aten.bitwise_left_shift.Tensor, aten.bitwise_left_shift.Tensor_Scalar,
         aten.bitwise_left_shift.Scalar_Tensor, aten.__lshift__.Tensor,
         aten.__lshift__.Scalar)(_binary("shift_left"))
# Arithmetic for signed integers; by the width or more (or a negative
# amount) all sign bits, as torch's kernels.
converts(aten.bitwise_right_shift.Tensor,
         aten.bitwise_right_shift.Tensor_Scalar,
         aten.bitwise_right_shift.Scalar_Tensor, aten.__rshift__.Tensor,
         aten.__rshift__.Scalar)(_binary("shift_right"))
converts(aten.bitwise_and.Scalar)(_binary("and"))
converts(aten.bitwise_or.Scalar)(_binary("or"))
converts(aten.bitwise_xor.Scalar)(_binary("xor"))


@converts(aten.isnan.default)
def _isnan_op(ctx, node):
    x = ctx.tensor(node.args[0])
    if x.dtype not in FLOATS:
        return ctx.zeros("bool", x.shape)
    return ctx.compare("ne", x, x)


@converts(aten.isinf.default)
def _isinf(ctx, node):
    x = ctx.tensor(node.args[0])
    if x.dtype not in FLOATS:
        return ctx.zeros("bool", x.shape)
    return ctx.compare("eq", ctx.unary("abs", x),
                       ctx.scalar(float("inf"), x.dtype))


@converts(aten.clamp.Tensor)
def _clamp_tensor(ctx, node):
    """Bounds that broadcast; a NaN in x stays (comparisons with it fail)."""
    dtype, _ = out_type(node)
    a = args(node)
    y = ctx.value(a[0], dtype)
    if a[1] is not None:
        lo = ctx.value(a[1], dtype)
        y = ctx.select(ctx.compare("lt", y, lo), lo, y)
    if a[2] is not None:
        hi = ctx.value(a[2], dtype)
        y = ctx.select(ctx.compare("gt", y, hi), hi, y)
    return ctx.broadcast(y, out_type(node)[1])


@converts(aten.elu.default)
def _elu(ctx, node):
    dtype, _ = out_type(node)
    x, alpha, scale, input_scale = args(node)[:4]
    x = ctx.value(x, dtype)
    inner = ctx.binary("mul", x, ctx.scalar(input_scale, dtype)) \
        if input_scale != 1 else x
    neg = ctx.binary("mul", ctx.binary("sub", ctx.unary("exp", inner),
                                       ctx.scalar(1, dtype)),
                     ctx.scalar(alpha * scale, dtype))
    pos = ctx.binary("mul", x, ctx.scalar(scale, dtype)) if scale != 1 else x
    return ctx.select(ctx.compare("gt", x, ctx.scalar(0, dtype)), pos, neg)


@converts(aten.atan2.default)
def _atan2(ctx, node):
    """atan(y / x), moved by pi into the quadrant of (x, y); x = 0 gives
    +-pi/2 by the sign of y (0 for y = 0)."""
    dtype, shape = out_type(node)
    y, x = ctx.value(node.args[0], dtype), ctx.value(node.args[1], dtype)

    def c(v):
        return ctx.scalar(v, dtype)
    base = ctx.unary("atan", ctx.binary("div", y, x))
    shift = ctx.select(ctx.compare("ge", y, c(0)), c(math.pi), c(-math.pi))
    r = ctx.select(ctx.compare("lt", x, c(0)), ctx.binary("add", base, shift),
                   base)
    axis = ctx.select(ctx.compare("gt", y, c(0)), c(math.pi / 2),
                      ctx.select(ctx.compare("lt", y, c(0)),
                                 c(-math.pi / 2), c(0)))
    return ctx.broadcast(
        ctx.select(ctx.compare("eq", x, c(0)), axis, r), shape)


@converts(aten.fill.Scalar)
def _fill(ctx, node):
    dtype, shape = out_type(node)
    return ctx.broadcast(ctx.scalar(node.args[1], dtype), shape)


@converts(aten.cumsum.default, aten.cumprod.default)
def _cumulative(ctx, node):
    dtype, shape = out_type(node)
    x = ctx.value(node.args[0], dtype)
    if not shape:
        return x
    kind = "cumsum" if node.target == aten.cumsum.default else "cumprod"
    return ctx.op(f"tcc.{kind}", [x], axis=node.args[1] % len(shape))


def _pad_mode(mode):
    def convert(ctx, node):
        x, low, high = _cropped(ctx, ctx.tensor(node.args[0]), node.args[1],
                                border=True)
        if all(p == 0 for p in low + high):
            return x
        return ctx.op("tcc.pad", [x], low=low, high=high, mode=enum(mode))

    return convert


converts(aten.reflection_pad1d.default, aten.reflection_pad2d.default,
         aten.reflection_pad3d.default)(_pad_mode(1))
converts(aten.replication_pad1d.default, aten.replication_pad2d.default,
         aten.replication_pad3d.default)(_pad_mode(2))


def _linear_index(ctx, index, shape, dim):
    """Flat positions in a row-major tensor of `shape` of the elements that
    `index` (of its own shape) picks along `dim`, the other coordinates its
    own: the index of ONNX's GatherElements and ScatterElements."""
    ishape = list(index.shape)
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    base = np.zeros(ishape, dtype=np.int64)
    for d, n in enumerate(ishape):
        if d != dim:
            view = [1] * len(ishape)
            view[d] = n
            base = base + (np.arange(n, dtype=np.int64) * strides[d]).reshape(
                view)
    idx = ctx.cast(index, "int64")
    if strides[dim] != 1:
        idx = ctx.binary("mul", idx, ctx.scalar(strides[dim], "int64"))
    return ctx.binary("add", idx, ctx.constant(base, "int64"))


@converts(aten.gather.default)
def _gather(ctx, node):
    x, dim, index = (ctx.tensor(node.args[0]), node.args[1],
                     ctx.tensor(node.args[2]))
    if 0 in index.shape:
        return ctx.zeros(x.dtype, index.shape)
    if not x.shape:
        return ctx.reshape(x, index.shape)
    dim %= len(x.shape)
    flat = ctx.reshape(x, [math.prod(x.shape)])
    return ctx.op("tcc.gather", [flat, _linear_index(ctx, index, x.shape,
                                                     dim)], axis=0)


_SCATTER_REDUCTIONS = {None: 0, "sum": 1, "add": 1, "prod": 2, "multiply": 2,
                       "amax": 3, "amin": 4, "mean": 1}
# What an element that only updates reach starts from, without include_self.
_SCATTER_IDENTITY = {"sum": 0.0, "prod": 1.0, "amax": float("-inf"),
                     "amin": float("inf"), "mean": 0.0}


def _scatter_check(node):
    a = named(node)
    if a.get("reduce") not in _SCATTER_REDUCTIONS:
        return f"scatter with reduce={a.get('reduce')!r}"
    if a.get("reduce") == "mean" and tcc_dtype(_val(node).dtype) == "bool":
        return "scatter_reduce mean of booleans"
    return None


def _scatter_identity(reduce, dtype):
    """What an element that only updates reach starts from: the
    reduction's identity, the type's extremes for integer max/min."""
    v = _SCATTER_IDENTITY[reduce]
    if dtype == "bool":
        return v > 0  # or starts from False, and from True
    if dtype in FLOATS or not math.isinf(v):
        return v
    info = np.iinfo(NUMPY_DTYPES[dtype])
    return info.min if v < 0 else info.max


@converts(aten.scatter.src, aten.scatter.value, aten.scatter_add.default,
          aten.scatter_reduce.two, aten.scatter.reduce,
          aten.scatter.value_reduce, check=_scatter_check)
def _scatter(ctx, node):
    """ONNX's ScatterElements on the flattened tensor: each update goes to
    its flat position (torch leaves the order of duplicates unspecified;
    tcc applies them in order). Without include_self the positions updates
    reach start from the reduction's identity; a mean is a sum divided by
    the count of what was summed."""
    a = named(node)
    dtype, shape = out_type(node)
    x = ctx.tensor(a["self"])
    index = ctx.tensor(a["index"])
    if not index.shape or 0 in index.shape:
        if 0 in index.shape:
            return x
        x, index = ctx.reshape(x, [1]), ctx.reshape(index, [1])
    xshape = list(x.shape)
    dim = a["dim"] % len(xshape)
    if "src" in a and isinstance(a["src"], torch.fx.Node):
        src = ctx.tensor(a["src"])
        if not src.shape:
            src = ctx.reshape(src, [1])
        src = ctx.slice(src, [0] * len(src.shape), [1] * len(src.shape),
                        index.shape)
    else:
        src = ctx.broadcast(ctx.value(a.get("value", a.get("src")), dtype),
                            index.shape)
    reduce = a.get("reduce")
    if node.target == aten.scatter_add.default:
        reduce = "sum"
    return _scatter_reduce(ctx, x, index, src, dim, reduce,
                           a.get("include_self", True) is not False, dtype,
                           shape)


def _scatter_reduce(ctx, x, index, src, dim, reduce, include_self, dtype,
                    shape):
    """x with src's elements reduced into the positions `index` (of src's
    shape) picks along `dim`."""
    xshape = list(x.shape)
    n, m = math.prod(xshape), math.prod(index.shape)
    where = ctx.reshape(_linear_index(ctx, index, xshape, dim), [m])
    updates = ctx.reshape(ctx.cast(src, dtype), [m])
    base = ctx.reshape(x, [n])

    def scatter(data, values, reduction):
        return ctx.op("tcc.scatter", [data, where, values], axis=0,
                      reduction=enum(_SCATTER_REDUCTIONS[reduction]))
    if reduce is not None and not include_self:
        base = scatter(base, ctx.broadcast(
            ctx.scalar(_scatter_identity(reduce, dtype), dtype), [m]), None)
    out = scatter(base, updates, reduce)
    if reduce == "mean":
        # torch divides integer sums rounding down.
        def divide(a, b):
            if dtype in FLOATS:
                return ctx.binary("div", a, b)
            return _floor_divide_int(ctx, a, b, dtype)
        count = scatter(ctx.zeros(dtype, [n]),
                        ctx.broadcast(ctx.scalar(1, dtype), [m]), "sum")
        if include_self:
            out = divide(out, ctx.binary("add", count, ctx.scalar(1, dtype)))
        else:
            reached = ctx.compare("gt", count, ctx.scalar(0, dtype))
            safe = ctx.select(reached, count, ctx.scalar(1, dtype))
            out = ctx.select(reached, divide(out, safe), ctx.reshape(x, [n]))
    return ctx.reshape(out, shape)


def _topk(ctx, x, k, dim, largest):
    shape = list(x.shape)
    if not shape:
        return x, ctx.zeros("int64", [])
    dim %= len(shape)
    out = list(shape)
    out[dim] = k
    if k == 0 or shape[dim] == 0:
        return ctx.zeros(x.dtype, out), ctx.zeros("int64", out)
    return ctx.op("tcc.topk", [x], results=[(x.dtype, out), ("int64", out)],
                  axis=dim, largest=bool(largest))


@converts(aten.topk.default)
def _topk_op(ctx, node):
    a = args(node)
    if not a[4]:
        raise Unsupported("topk with sorted=False")
    return _topk(ctx, ctx.tensor(a[0]), a[1], a[2], a[3])


@converts(aten.sort.default, aten.sort.stable)
def _sort(ctx, node):
    a = named(node)
    x = ctx.tensor(a["self"])
    dim = a.get("dim", -1)
    n = x.shape[dim % len(x.shape)] if x.shape else 1
    return _topk(ctx, x, n, dim, a.get("descending", False))


# -- indexing ----------------------------------------------------------------

class _Indexing:
    """Advanced indexing of x by `indices` (tensors or None per leading
    dimension): the indexed dimensions (their index tensors broadcast
    together, negative entries counted from the end) become one flat
    dimension of a view of x, addressed by one combined index. Indexed
    dimensions next to each other keep their place; apart, they go first
    (as torch puts their result first)."""

    def __init__(self, ctx, x, indices):
        shape = list(x.shape)
        self.dims = [d for d, i in enumerate(indices) if i is not None]
        self.broadcast = list(torch.broadcast_shapes(
            *[tuple(_val(indices[d]).shape) for d in self.dims]))
        dims = self.dims
        rest = [d for d in range(len(shape)) if d not in dims]
        if dims == list(range(dims[0], dims[-1] + 1)):
            self.perm, self.at = list(range(len(shape))), dims[0]
        else:
            self.perm, self.at = dims + rest, 0
        moved = [shape[d] for d in self.perm]
        self.moved = moved
        self.width = math.prod(shape[d] for d in dims)
        self.pre = moved[:self.at]
        self.post = moved[self.at + len(dims):]
        self.view = ctx.reshape(ctx.transpose(x, self.perm),
                                self.pre + [self.width] + self.post)
        linear, stride = None, self.width
        for d in dims:
            stride //= shape[d]
            i = ctx.broadcast(ctx.cast(ctx.tensor(indices[d]), "int64"),
                              self.broadcast)
            i = ctx.select(ctx.compare("lt", i, ctx.scalar(0, "int64")),
                           ctx.binary("add", i,
                                      ctx.scalar(shape[d], "int64")), i)
            if stride != 1:
                i = ctx.binary("mul", i, ctx.scalar(stride, "int64"))
            linear = i if linear is None else ctx.binary("add", linear, i)
        self.linear = linear

    def result_shape(self):
        return self.pre + self.broadcast + self.post


def _index_check(node):
    for i in node.args[1]:
        if i is not None and _val(i).dtype in (torch.bool, torch.uint8):
            return "indexing with a mask (its result's shape is the data's)"
    return None


@converts(aten.index.Tensor, check=_index_check)
def _index(ctx, node):
    """Advanced indexing (_Indexing): a gather of the flat view."""
    x = ctx.tensor(node.args[0])
    _, out_shape = out_type(node)
    if 0 in out_shape:
        return ctx.zeros(x.dtype, out_shape)
    ix = _Indexing(ctx, x, list(node.args[1]))
    linear = ix.linear if ix.broadcast else ctx.reshape(ix.linear, [1])
    y = ctx.op("tcc.gather", [ix.view, linear], axis=ix.at)
    return ctx.reshape(y, out_shape)


def _mask_put(node):
    """x[mask] = v with one boolean mask over x's leading dimensions and
    one value: a select (other masks write a number of values known only
    at run time)."""
    indices = node.args[1]
    masks = [i for i in indices
             if i is not None and _val(i).dtype in (torch.bool, torch.uint8)]
    if not masks:
        return False
    values = _val(node.args[2])
    return (len(indices) == 1 and _val(indices[0]).dtype == torch.bool and
            tuple(_val(indices[0]).shape) ==
            tuple(_val(node.args[0]).shape[:_val(indices[0]).dim()]) and
            values.numel() == 1)


def _index_put_check(node):
    for i in node.args[1]:
        if i is not None and _val(i).dtype in (torch.bool, torch.uint8) \
                and not _mask_put(node):
            return "index_put with a mask (other than one mask and one value)"
    return None


@converts(aten.index_put.default, check=_index_put_check)
def _index_put(ctx, node):
    """x with `values` written (or added, with accumulate) where advanced
    indexing (_Indexing) reads: the flat position of every element of the
    indexed result, scattered into the flat view, then moved back."""
    a = named(node)
    x = ctx.tensor(a["self"])
    dtype, shape = out_type(node)
    if 0 in shape:
        return x
    if _mask_put(node):
        mask = ctx.tensor(a["indices"][0])
        mask = ctx.reshape(mask, list(mask.shape) +
                           [1] * (len(shape) - len(mask.shape)))
        v = ctx.reshape(ctx.value(a["values"], dtype), [])
        if a["accumulate"]:
            v = ctx.binary("add", x, v)
        return ctx.broadcast(ctx.select(mask, v, x), shape)
    ix = _Indexing(ctx, x, list(a["indices"]))
    target = ix.result_shape()
    if 0 in target:
        return x
    q = math.prod(ix.post)
    nb, npre, npost = len(ix.broadcast), len(ix.pre), len(ix.post)
    pos = ctx.binary("mul", ctx.reshape(
        ix.linear, [1] * npre + ix.broadcast + [1] * npost),
        ctx.scalar(q, "int64"))
    if ix.pre:
        pos = ctx.binary("add", pos, ctx.constant(
            (np.arange(math.prod(ix.pre)) * ix.width * q).reshape(
                ix.pre + [1] * (nb + npost)), "int64"))
    if ix.post:
        pos = ctx.binary("add", pos, ctx.constant(
            np.arange(q).reshape([1] * (npre + nb) + ix.post), "int64"))
    m, n = math.prod(target), math.prod(shape)
    values = ctx.broadcast(ctx.value(a["values"], dtype), target)
    flat = ctx.op("tcc.scatter", [
        ctx.reshape(ix.view, [n]),
        ctx.reshape(ctx.broadcast(pos, target), [m]),
        ctx.reshape(values, [m])], axis=0,
        reduction=enum(1 if a["accumulate"] else 0))
    inverse = [0] * len(ix.perm)
    for k, d in enumerate(ix.perm):
        inverse[d] = k
    return ctx.transpose(ctx.reshape(flat, ix.moved), inverse)


@converts(aten.diagonal.default)
def _diagonal(ctx, node):
    """The two dimensions moved last and flattened; the diagonal is a
    strided slice of that (stride n2 + 1)."""
    a = named(node)
    x = ctx.tensor(a["self"])
    _, out_shape = out_type(node)
    rank = len(x.shape)
    d1, d2, offset = a["dim1"] % rank, a["dim2"] % rank, a["offset"]
    n1, n2 = x.shape[d1], x.shape[d2]
    length = out_shape[-1]
    if length == 0 or 0 in out_shape:
        return ctx.zeros(x.dtype, out_shape)
    rest = [d for d in range(rank) if d not in (d1, d2)]
    v = ctx.transpose(x, rest + [d1, d2])
    lead = [x.shape[d] for d in rest]
    v = ctx.reshape(v, lead + [n1 * n2])
    start = offset if offset >= 0 else -offset * n2
    y = ctx.slice(v, [0] * len(lead) + [start], [1] * len(lead) + [n2 + 1],
                  lead + [length])
    return ctx.reshape(y, out_shape)


def _positions(shape):
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def _scatter_positions(ctx, x, src, where):
    """x with the elements at the flat positions `where` (a numpy array of
    src's shape) replaced by src's."""
    n, m = math.prod(x.shape), where.size
    if m == 0:
        return x
    flat = ctx.op("tcc.scatter", [
        ctx.reshape(x, [n]), ctx.constant(where.reshape(m), "int64"),
        ctx.reshape(ctx.cast(src, x.dtype), [m])], axis=0,
        reduction=enum(0))
    return ctx.reshape(flat, x.shape)


def _replace_rows(ctx, x, src, dim, start, end):
    """x with [start, end) along `dim` (a non-empty range) replaced by src
    (x's shape but end - start there): the parts of x around it and src
    concatenated. Unlike a scatter this needs no index constant, and the
    graph passes see through it (a zero `x` folds away; the backward of a
    split adds such concatenations, which become one)."""
    if 0 in x.shape:
        return x
    src = ctx.cast(src, x.dtype)
    parts = []
    if start > 0:
        parts.append(ctx.slice(x, [0] * len(x.shape), [1] * len(x.shape),
                               x.shape[:dim] + [start] + x.shape[dim + 1:]))
    parts.append(src)
    if end < x.shape[dim]:
        offsets = [0] * len(x.shape)
        offsets[dim] = end
        parts.append(ctx.slice(
            x, offsets, [1] * len(x.shape),
            x.shape[:dim] + [x.shape[dim] - end] + x.shape[dim + 1:]))
    if len(parts) == 1:
        return src
    return ctx.op("tcc.concat", parts, axis=dim)


@converts(aten.slice_scatter.default)
def _slice_scatter(ctx, node):
    a = named(node)
    x, src = ctx.tensor(a["self"]), ctx.tensor(a["src"])
    dim = a["dim"] % max(len(x.shape), 1)
    size = x.shape[dim]
    start = a["start"] if a["start"] is not None else 0
    end = a["end"] if a["end"] is not None else size
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    if a["step"] == 1 and x.shape:
        return x if end == start else \
            _replace_rows(ctx, x, src, dim, start, end)
    index = [slice(None)] * len(x.shape)
    index[dim] = slice(start, end, a["step"])
    return _scatter_positions(ctx, x, src, _positions(x.shape)[tuple(index)])


@converts(aten.select_scatter.default)
def _select_scatter(ctx, node):
    a = named(node)
    x, src = ctx.tensor(a["self"]), ctx.tensor(a["src"])
    dim = a["dim"] % len(x.shape)
    if 0 in x.shape:
        return x
    index = a["index"] % x.shape[dim]
    return _replace_rows(ctx, x, ctx.reshape(
        src, x.shape[:dim] + [1] + x.shape[dim + 1:]), dim, index, index + 1)


@converts(aten.unfold.default)
def _unfold(ctx, node):
    """Windows of `size` every `step` along a dimension: a gather of their
    positions, the window's own axis moved last."""
    x = ctx.tensor(node.args[0])
    _, out_shape = out_type(node)
    if not x.shape or 0 in out_shape:
        return ctx.reshape(x, out_shape) if math.prod(out_shape) else \
            ctx.zeros(x.dtype, out_shape)
    dim, size, step = node.args[1] % len(x.shape), node.args[2], node.args[3]
    windows = out_shape[dim]
    at = (np.arange(windows)[:, None] * step + np.arange(size)[None, :])
    y = ctx.op("tcc.gather", [x, ctx.constant(at, "int64")], axis=dim)
    perm = list(range(len(x.shape) + 1))
    perm.append(perm.pop(dim + 1))
    return ctx.transpose(y, perm)


@converts(aten.native_group_norm.default)
def _group_norm(ctx, node):
    """x as [N, G, rest]: mean and biased variance per group, then the
    per-channel affine; also the mean and 1/std per (N, G), as torch."""
    a = named(node)
    dtype, shape = out_type(node, 0)
    x = ctx.value(a["input"], dtype)
    n, c, groups = a["N"], a["C"], a["group"]
    g = ctx.reshape(x, [n, groups, math.prod(shape) // max(n * groups, 1)])
    mean = ctx.reduce("mean", g, [2], True)
    centered = ctx.binary("sub", g, mean)
    var = ctx.reduce("mean", ctx.binary("mul", centered, centered), [2], True)
    rstd = ctx.unary("rsqrt", ctx.binary("add", var,
                                          ctx.scalar(a["eps"], dtype)))
    y = ctx.reshape(ctx.binary("mul", centered, rstd), shape)
    affine = [c] + [1] * (len(shape) - 2)
    if a["weight"] is not None:
        y = ctx.binary("mul", y, ctx.reshape(ctx.tensor(a["weight"]), affine))
    if a["bias"] is not None:
        y = ctx.binary("add", y, ctx.reshape(ctx.tensor(a["bias"]), affine))
    return (y, ctx.reshape(mean, [n, groups]), ctx.reshape(rstd, [n, groups]))


@converts(aten.put.default)
def _put(ctx, node):
    """Writes (or adds) `source` at flat positions of x."""
    a = named(node)
    x, index = ctx.tensor(a["self"]), ctx.tensor(a["index"])
    dtype, shape = out_type(node)
    n, m = math.prod(shape), math.prod(index.shape)
    if m == 0 or n == 0:
        return x
    i = ctx.reshape(ctx.cast(index, "int64"), [m])
    i = ctx.select(ctx.compare("lt", i, ctx.scalar(0, "int64")),
                   ctx.binary("add", i, ctx.scalar(n, "int64")), i)
    src = ctx.reshape(ctx.value(a["source"], dtype), [m])
    flat = ctx.op("tcc.scatter", [ctx.reshape(x, [n]), i, src], axis=0,
                  reduction=enum(1 if a["accumulate"] else 0))
    return ctx.reshape(flat, shape)


# -- more elementwise math ---------------------------------------------------

def _isnan(ctx, x):
    return ctx.compare("ne", x, x)


def _is_inf(ctx, x):
    return ctx.compare("eq", ctx.unary("abs", x),
                       ctx.scalar(float("inf"), x.dtype))


def _sign_bit(ctx, x):
    """Whether x's sign bit is set (-0.0 and negative NaNs included)."""
    if x.dtype == "bool":
        return ctx.compare("ne", x, x)  # false everywhere
    if x.dtype in ("float16", "bfloat16"):
        x = ctx.cast(x, "float32")  # the sign survives the widening
    if x.dtype in ("float32", "float64"):
        bits = "int32" if x.dtype == "float32" else "int64"
        x = ctx.op("tcc.bitcast", [x], results=[(bits, x.shape)])
    return ctx.compare("lt", x, ctx.scalar(0, x.dtype))


@converts(aten.exp2.default)
def _exp2(ctx, node):
    dtype, _ = out_type(node)
    if dtype not in FLOATS:
        raise Unsupported(f"exp2 of {dtype}")
    return ctx.binary("pow", ctx.scalar(2.0, dtype),
                      ctx.value(node.args[0], dtype))


@converts(aten.signbit.default)
def _signbit(ctx, node):
    return _sign_bit(ctx, ctx.tensor(node.args[0]))


@converts(aten.copysign.Tensor, aten.copysign.Scalar)
def _copysign(ctx, node):
    dtype, _ = out_type(node)
    mag = ctx.unary("abs", ctx.value(node.args[0], dtype))
    neg = _sign_bit(ctx, ctx.value(node.args[1], dtype))
    return ctx.select(neg, ctx.unary("neg", mag), mag)


def _wide(dtype):
    """The type a float computation runs in so that its result rounds once:
    float64 for narrower floats."""
    return "float64" if dtype in FLOATS else dtype


@converts(aten.hypot.default)
def _hypot(ctx, node):
    """sqrt(a^2 + b^2) in float64, which neither overflows nor underflows
    for float32 operands; an infinite operand gives inf even beside NaN."""
    dtype, _ = out_type(node)
    wide = _wide(dtype)
    a = ctx.cast(ctx.value(node.args[0], dtype), wide)
    b = ctx.cast(ctx.value(node.args[1], dtype), wide)
    r = ctx.unary("sqrt", ctx.binary("add", ctx.binary("mul", a, a),
                                     ctx.binary("mul", b, b)))
    inf = ctx.binary("or", _is_inf(ctx, a), _is_inf(ctx, b))
    r = ctx.select(inf, ctx.scalar(float("inf"), wide), r)
    return ctx.cast(r, dtype)


def _nan_ignoring(kind):
    def convert(ctx, node):
        dtype, _ = out_type(node)
        x = ctx.value(node.args[0], dtype)
        y = ctx.value(node.args[1], dtype)
        r = ctx.binary(kind, x, y)
        if dtype not in FLOATS:
            return r
        # A NaN loses to a number; two NaNs give NaN.
        return ctx.select(_isnan(ctx, x), y,
                          ctx.select(_isnan(ctx, y), x, r))
    return convert


converts(aten.fmax.default)(_nan_ignoring("max"))
converts(aten.fmin.default)(_nan_ignoring("min"))


@converts(aten.ldexp.Tensor, aten.ldexp.default)
def _ldexp(ctx, node):
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    e = ctx.value(node.args[1], dtype)
    return ctx.binary("mul", x, ctx.binary("pow", ctx.scalar(2.0, dtype), e))


@converts(aten.round.decimals)
def _round_decimals(ctx, node):
    """torch's rounding to `decimals` places: scaled by the power of ten,
    rounded half to even, scaled back, in the tensor's own type."""
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    decimals = named(node)["decimals"]
    if dtype not in FLOATS:
        raise Unsupported(f"round of {dtype}")
    scale = ctx.scalar(10.0 ** abs(decimals), dtype)
    if decimals >= 0:
        return ctx.binary("div", ctx.unary("round", ctx.binary("mul", x, scale)),
                          scale)
    return ctx.binary("mul", ctx.unary("round", ctx.binary("div", x, scale)),
                      scale)


@converts(aten.angle.default)
def _angle(ctx, node):
    """The argument of a real number: pi below zero, else 0 (NaN stays)."""
    dtype, _ = out_type(node)
    x = ctx.value(node.args[0], dtype)
    r = ctx.select(ctx.compare("lt", x, ctx.scalar(0, dtype)),
                   ctx.scalar(math.pi, dtype), ctx.scalar(0, dtype))
    return ctx.select(_isnan(ctx, x), x, r)


@converts(aten.frexp.Tensor)
def _frexp(ctx, node):
    """x = m * 2^e with 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf and NaN):
    e from log2 in float64, corrected by one where log2 rounded across a
    power of two; m is then exact."""
    dtype, _ = out_type(node, 0)
    if dtype not in FLOATS:
        raise Unsupported(f"frexp of {dtype}")
    x = ctx.cast(ctx.value(node.args[0], dtype), "float64")
    ax = ctx.unary("abs", x)
    edge = ctx.binary("or", ctx.binary("or", _isnan(ctx, x),
                                          _is_inf(ctx, x)),
                         ctx.compare("eq", ax, ctx.scalar(0.0, "float64")))
    safe = ctx.select(edge, ctx.scalar(1.0, "float64"), ax)
    e = ctx.binary("add", ctx.unary("floor", ctx.binary(
        "div", ctx.unary("log", safe), ctx.scalar(math.log(2), "float64"))),
        ctx.scalar(1.0, "float64"))
    two = ctx.scalar(2.0, "float64")
    m = ctx.binary("div", safe, ctx.binary("pow", two, e))
    one, half = ctx.scalar(1.0, "float64"), ctx.scalar(0.5, "float64")
    up = ctx.compare("ge", m, one)
    down = ctx.compare("lt", m, half)
    e = ctx.select(up, ctx.binary("add", e, one),
                   ctx.select(down, ctx.binary("sub", e, one), e))
    m = ctx.select(up, ctx.binary("div", m, two),
                   ctx.select(down, ctx.binary("mul", m, two), m))
    m = ctx.select(_sign_bit(ctx, x), ctx.unary("neg", m), m)
    m = ctx.select(edge, x, m)
    e = ctx.select(edge, ctx.scalar(0.0, "float64"), e)
    return ctx.cast(m, dtype), ctx.cast(e, "int32")


# -- scans, order statistics -------------------------------------------------

_SCAN_LIMIT = 1 << 24  # elements of the n x n prefix masks a scan may build


def _last_axis(ctx, x, dim):
    """x with `dim` moved last, and the permutation that moves it back."""
    rank = len(x.shape)
    perm = [d for d in range(rank) if d != dim] + [dim]
    back = [perm.index(d) for d in range(rank)]
    return ctx.transpose(x, perm), back


def _prefix(ctx, x):
    """x [..., n] as [..., n, n] (row i holds the whole line) and the mask
    of the prefix each row keeps (column j <= i)."""
    n = x.shape[-1]
    if math.prod(x.shape) * n > _SCAN_LIMIT:
        raise Unsupported(f"a scan over {n} elements of a tensor of "
                          f"{math.prod(x.shape)} (tcc builds the n x n prefix "
                          "mask)")
    rows = ctx.broadcast(ctx.reshape(x, list(x.shape[:-1]) + [1, n]),
                         list(x.shape) + [n])
    mask = ctx.constant(np.tril(np.ones([n, n], dtype=bool)), "bool")
    return rows, mask


def _extreme_identity(dtype, kind):
    if dtype in FLOATS:
        return float("-inf") if kind == "max" else float("inf")
    if dtype == "bool":
        return kind != "max"
    info = np.iinfo(NUMPY_DTYPES[dtype])
    return int(info.min) if kind == "max" else int(info.max)


@converts(aten.cummax.default, aten.cummin.default)
def _cumulative_extreme(ctx, node):
    """Running maximum (minimum) and where it was last reached, NaN
    sticking once seen: each prefix reduced from an n x n mask."""
    a = named(node)
    x = ctx.tensor(a["self"])
    kind = "max" if node.target == aten.cummax.default else "min"
    if not x.shape or 0 in x.shape:
        return x, ctx.zeros("int64", x.shape)
    dim = a["dim"] % len(x.shape)
    v, back = _last_axis(ctx, x, dim)
    if v.dtype == "bool":
        v = ctx.cast(v, "uint8")
    rows, mask = _prefix(ctx, v)
    n = v.shape[-1]
    ident = ctx.scalar(_extreme_identity(v.dtype, kind), v.dtype)
    best = ctx.reduce(kind, ctx.select(mask, rows, ident), [len(rows.shape) - 1],
                      False)
    hit = ctx.compare("eq", rows, ctx.reshape(best, list(best.shape) + [1]))
    if v.dtype in FLOATS:
        nan_rows = ctx.binary("and", mask, _isnan(ctx, rows))
        any_nan = ctx.compare("gt", ctx.reduce(
            "sum", ctx.cast(nan_rows, "int32"), [len(rows.shape) - 1], False),
            ctx.scalar(0, "int32"))
        best = ctx.select(any_nan, ctx.scalar(float("nan"), v.dtype), best)
        hit = ctx.select(ctx.reshape(any_nan, list(any_nan.shape) + [1]),
                         nan_rows, hit)
    cols = ctx.constant(np.arange(n, dtype=np.int64), "int64")
    where = ctx.select(ctx.binary("and", mask, hit), cols,
                       ctx.scalar(-1, "int64"))
    idx = ctx.reduce("max", where, [len(rows.shape) - 1], False)
    best = ctx.cast(best, x.dtype)
    return ctx.transpose(best, back), ctx.transpose(idx, back)


@converts(aten.logcumsumexp.default)
def _logcumsumexp(ctx, node):
    """log(sum_{j<=i} exp(x_j)), each prefix shifted by its own maximum so
    that nothing overflows or underflows to a wrong -inf."""
    dtype, _ = out_type(node)
    if dtype not in FLOATS:
        raise Unsupported(f"logcumsumexp of {dtype}")
    x = ctx.value(node.args[0], dtype)
    if not x.shape or 0 in x.shape:
        return x
    dim = node.args[1] % len(x.shape)
    v, back = _last_axis(ctx, x, dim)
    rows, mask = _prefix(ctx, v)
    last = len(rows.shape) - 1
    m = ctx.reduce("max", ctx.select(mask, rows, ctx.scalar(float("-inf"),
                                                           dtype)),
                   [last], True)
    m = ctx.select(_is_inf(ctx, m), ctx.scalar(0.0, dtype), m)
    terms = ctx.select(mask, ctx.unary("exp", ctx.binary("sub", rows, m)),
                       ctx.scalar(0.0, dtype))
    r = ctx.binary("add", ctx.unary("log", ctx.reduce("sum", terms, [last],
                                                      True)), m)
    return ctx.transpose(ctx.reshape(r, v.shape), back)


def _pick(ctx, x, pos, axis):
    """x's element at the runtime position `pos` (x's shape with `axis`
    of size 1) along `axis`."""
    n = x.shape[axis]
    view = [1] * len(x.shape)
    view[axis] = n
    iota = ctx.constant(np.arange(n, dtype=np.int64).reshape(view), "int64")
    hit = ctx.compare("eq", iota, pos)
    zero = ctx.scalar(False if x.dtype == "bool" else 0, x.dtype)
    if x.dtype == "bool":
        return ctx.cast(ctx.reduce("max", ctx.cast(ctx.select(hit, x, zero),
                                                   "uint8"), [axis], True),
                        "bool")
    return ctx.reduce("sum", ctx.select(hit, x, zero), [axis], True)


def _order_statistic(ctx, x, dim, keep, position, nan):
    """The element of each line along `dim` at sorted `position` (a Python
    int or a function of the count of non-NaN elements) and its index.
    nan: 'propagate' (a NaN in the line gives NaN, at its first index) or
    'ignore' (NaNs sort last and are not counted)."""
    if not x.shape:
        return x, ctx.zeros("int64", [])
    dim %= len(x.shape)
    n = x.shape[dim]
    out = list(x.shape)
    out[dim] = 1
    floats = x.dtype in FLOATS
    key = x
    if floats:
        isnan = _isnan(ctx, x)
        # NaNs sort last; an infinity beats them to the place before.
        key = ctx.select(isnan, ctx.scalar(float("inf"), x.dtype), x)
    values, indices = _topk(ctx, key, n, dim, False)
    if floats:
        count = ctx.reduce("sum", ctx.cast(ctx.unary("not", isnan), "int64"),
                           [dim], True)
    else:
        count = ctx.broadcast(ctx.scalar(n, "int64"), out)
    pos = position(ctx, count) if callable(position) else \
        ctx.broadcast(ctx.scalar(position, "int64"), out)
    v = _pick(ctx, values, pos, dim)
    i = _pick(ctx, indices, pos, dim)
    if floats:
        if nan == "propagate":
            has = ctx.compare("lt", count, ctx.scalar(n, "int64"))
            first = ctx.op("tcc.argmax", [ctx.cast(isnan, "uint8")], axis=dim,
                           keepdims=True)
            v = ctx.select(has, ctx.scalar(float("nan"), x.dtype), v)
            i = ctx.select(has, first, i)
        else:
            empty = ctx.compare("eq", count, ctx.scalar(0, "int64"))
            v = ctx.select(empty, ctx.scalar(float("nan"), x.dtype), v)
            i = ctx.select(empty, ctx.zeros("int64", []), i)
    if not keep:
        out.pop(dim)
        v, i = ctx.reshape(v, out), ctx.reshape(i, out)
    return v, i


def _lower_middle(ctx, count):
    """(count - 1) // 2, and 0 for an empty line."""
    return ctx.binary("max", ctx.binary("div", ctx.binary(
        "sub", count, ctx.scalar(1, "int64")), ctx.scalar(2, "int64")),
        ctx.scalar(0, "int64"))


@converts(aten.kthvalue.default)
def _kthvalue(ctx, node):
    a = named(node)
    x = ctx.tensor(a["self"])
    return _order_statistic(ctx, x, a["dim"], bool(a["keepdim"]), a["k"] - 1,
                            "propagate")


@converts(aten.median.default, aten.nanmedian.default)
def _median_all(ctx, node):
    x = ctx.tensor(node.args[0])
    if 0 in x.shape:
        return ctx.scalar(float("nan"), x.dtype)
    flat = ctx.reshape(x, [math.prod(x.shape)])
    nan = "propagate" if node.target == aten.median.default else "ignore"
    v, _ = _order_statistic(ctx, flat, 0, False, _lower_middle, nan)
    return v


@converts(aten.median.dim, aten.nanmedian.dim)
def _median_dim(ctx, node):
    a = named(node)
    x = ctx.tensor(a["self"])
    nan = "propagate" if node.target == aten.median.dim else "ignore"
    return _order_statistic(ctx, x, a["dim"], bool(a["keepdim"]),
                            _lower_middle, nan)


# -- views that copy -----------------------------------------------------------

@converts(aten.unbind_copy.int)
def _unbind(ctx, node):
    x = ctx.tensor(node.args[0])
    dim = (node.args[1] if len(node.args) > 1 else 0) % len(x.shape)
    shape = list(x.shape)
    rest = shape[:dim] + shape[dim + 1:]
    outs = []
    for i in range(shape[dim]):
        offsets = [0] * len(shape)
        offsets[dim] = i
        sizes = list(shape)
        sizes[dim] = 1
        outs.append(ctx.reshape(ctx.slice(x, offsets, [1] * len(shape), sizes),
                                rest))
    return tuple(outs)


@converts(aten.narrow_copy.default, aten.narrow.default)
def _narrow(ctx, node):
    a = named(node)
    x = ctx.tensor(a["self"])
    if not isinstance(a["start"], int):
        raise Unsupported("narrow at a position a tensor holds")
    dim = a["dim"] % len(x.shape)
    start = a["start"] % x.shape[dim] if a["start"] < 0 else a["start"]
    offsets = [0] * len(x.shape)
    offsets[dim] = start
    sizes = list(x.shape)
    sizes[dim] = a["length"]
    return ctx.slice(x, offsets, [1] * len(x.shape), sizes)


@converts(aten.diagonal_scatter.default)
def _diagonal_scatter(ctx, node):
    a = named(node)
    x, src = ctx.tensor(a["self"]), ctx.tensor(a["src"])
    where = np.diagonal(_positions(x.shape), a["offset"], a["dim1"], a["dim2"])
    return _scatter_positions(ctx, x, src, np.ascontiguousarray(where))


@converts(aten.index_reduce.default, check=_scatter_check)
def _index_reduce(ctx, node):
    """Slices of `source` reduced into `self` at the positions `index`
    names along `dim`: scatter_reduce with the index spread over the
    slices."""
    a = named(node)
    dtype, shape = out_type(node)
    x, index, src = (ctx.tensor(a["self"]), ctx.tensor(a["index"]),
                     ctx.tensor(a["source"]))
    if not x.shape:
        x, src = ctx.reshape(x, [1]), ctx.reshape(src, [1])
        index = ctx.reshape(index, [1])
    dim = a["dim"] % len(x.shape)
    if not index.shape:
        index = ctx.reshape(index, [1])
    if 0 in src.shape:
        return ctx.reshape(x, shape)
    view = [1] * len(src.shape)
    view[dim] = index.shape[0]
    index = ctx.broadcast(ctx.reshape(index, view), src.shape)
    return _scatter_reduce(ctx, x, index, src, dim, a["reduce"],
                           a["include_self"] is not False, dtype, shape)


# -- search ------------------------------------------------------------------

def _count_below(ctx, boundaries, x, right, out_dtype):
    """How many of `boundaries` (its last axis, sorted) lie below each x
    (at or below, with `right`): the insertion position of a binary
    search."""
    pred = "le" if right else "lt"
    common = tcc_dtype(torch.promote_types(
        getattr(torch, boundaries.dtype), getattr(torch, x.dtype)))
    b = ctx.cast(boundaries, common)
    v = ctx.cast(x, common)
    hit = ctx.compare(pred, ctx.reshape(b, list(b.shape[:-1]) + [1, b.shape[-1]]),
                      ctx.reshape(v, list(v.shape) + [1]))
    count = ctx.reduce("sum", ctx.cast(hit, "int64"), [len(hit.shape) - 1],
                       False)
    return ctx.cast(count, out_dtype)


def _insertion_positions(ctx, node, seq, value, right):
    """Where each of `value` (a tensor or a number) goes in the sorted last
    axis of `seq` (one sequence for every value when `seq` is 1-d)."""
    dtype, shape = out_type(node)
    if isinstance(value, torch.fx.Node):
        x = ctx.tensor(value)
    else:
        x = ctx.value(value, seq.dtype)
    if seq.shape[-1] == 0 or 0 in shape:
        return ctx.zeros(dtype, shape)
    if len(seq.shape) == 1:
        seq = ctx.reshape(seq, [1, seq.shape[0]])
        x = ctx.reshape(x, [1, math.prod(x.shape)])
    return ctx.reshape(_count_below(ctx, seq, x, right, dtype), shape)


@converts(aten.bucketize.Tensor, aten.bucketize.Scalar)
def _bucketize(ctx, node):
    a = named(node)
    return _insertion_positions(ctx, node, ctx.tensor(a["boundaries"]),
                                a["self"], a["right"])


@converts(aten.searchsorted.Tensor, aten.searchsorted.Scalar)
def _searchsorted(ctx, node):
    a = named(node)
    seq = ctx.tensor(a["sorted_sequence"])
    if a.get("sorter") is not None:
        seq = _take_along_last(ctx, seq, ctx.tensor(a["sorter"]))
    right = bool(a["right"]) or a.get("side") == "right"
    return _insertion_positions(ctx, node, seq, a["self"], right)


def _take_along_last(ctx, x, index):
    """x's elements at `index` (x's shape) along the last axis."""
    shape = list(x.shape)
    n = math.prod(shape)
    flat = _linear_index(ctx, index, shape, len(shape) - 1)
    return ctx.reshape(ctx.op("tcc.gather", [
        ctx.reshape(x, [n]), ctx.reshape(flat, [n])], axis=0), shape)


# -- products and distances --------------------------------------------------

def _scaled_sum(ctx, node, dtype, product, shape):
    """beta * self + alpha * product, self ignored where beta is 0."""
    a = named(node)
    beta, alpha = a["beta"], a["alpha"]
    if alpha != 1:
        product = ctx.binary("mul", product, ctx.scalar(alpha, dtype))
    if beta == 0:
        return ctx.broadcast(product, shape)
    x = ctx.value(a["self"], dtype)
    if beta != 1:
        x = ctx.binary("mul", x, ctx.scalar(beta, dtype))
    return ctx.broadcast(ctx.binary("add", x, product), shape)


@converts(aten.addmv.default)
def _addmv(ctx, node):
    dtype, shape = out_type(node)
    a = named(node)
    m, v = ctx.value(a["mat"], dtype), ctx.value(a["vec"], dtype)
    mv = ctx.reshape(ctx.op("tcc.matmul", [m, ctx.reshape(v, [v.shape[0], 1])]),
                     [m.shape[0]])
    return _scaled_sum(ctx, node, dtype, mv, shape)


@converts(aten.addbmm.default)
def _addbmm(ctx, node):
    dtype, shape = out_type(node)
    a = named(node)
    b1, b2 = ctx.value(a["batch1"], dtype), ctx.value(a["batch2"], dtype)
    if b1.shape[0] == 0 or b1.shape[2] == 0:
        prod = ctx.zeros(dtype, shape)
    else:
        prod = ctx.reduce("sum", ctx.op("tcc.matmul", [b1, b2]), [0], False)
    return _scaled_sum(ctx, node, dtype, prod, shape)


def _p_norm(ctx, d, axes, p):
    """The p-norm of d over `axes`: torch's vector_norm, p = 0 counting the
    non-zeros and +-inf the largest / smallest magnitude."""
    dtype = d.dtype
    ad = ctx.unary("abs", d)
    if p == 0:
        return ctx.reduce("sum", ctx.cast(ctx.compare(
            "ne", d, ctx.scalar(0, dtype)), dtype), axes, False)
    if p == float("inf"):
        return ctx.reduce("max", ad, axes, False)
    if p == float("-inf"):
        return ctx.reduce("min", ad, axes, False)
    if p == 1:
        return ctx.reduce("sum", ad, axes, False)
    if p == 2:
        return ctx.unary("sqrt", ctx.reduce("sum", ctx.binary("mul", d, d),
                                            axes, False))
    s = ctx.reduce("sum", ctx.binary("pow", ad, ctx.scalar(p, dtype)), axes,
                   False)
    return ctx.binary("pow", s, ctx.scalar(1.0 / p, dtype))


@converts(aten.dist.default)
def _dist(ctx, node):
    dtype, _ = out_type(node)
    a = named(node)
    d = ctx.binary("sub", ctx.value(a["self"], dtype),
                   ctx.value(a["other"], dtype))
    if 0 in d.shape:
        return ctx.zeros(dtype, [])
    return _p_norm(ctx, d, list(range(len(d.shape))), float(a["p"]))


@converts(aten._cdist_forward.default)
def _cdist(ctx, node):
    """Pairwise p-norm distances of the rows of x1 [..., P, M] and x2
    [..., R, M], from the differences themselves (no |a|^2 - 2ab + |b|^2
    shortcut, so small distances stay exact)."""
    dtype, shape = out_type(node)
    a = named(node)
    x1, x2 = ctx.value(a["x1"], dtype), ctx.value(a["x2"], dtype)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    if x1.shape[-1] == 0:
        return ctx.zeros(dtype, shape)
    u = ctx.reshape(x1, list(x1.shape[:-1]) + [1, x1.shape[-1]])
    v = ctx.reshape(x2, list(x2.shape[:-2]) + [1] + list(x2.shape[-2:]))
    d = ctx.binary("sub", u, v)
    r = _p_norm(ctx, d, [len(d.shape) - 1], float(a["p"]))
    return ctx.broadcast(r, shape)


@converts(aten._pdist_forward.default)
def _pdist(ctx, node):
    """The p-norm distance of every pair of rows i < j, in row-major
    order of the pairs."""
    dtype, shape = out_type(node)
    a = named(node)
    x = ctx.value(a["self"], dtype)
    n, m = x.shape
    if shape[0] == 0:
        return ctx.zeros(dtype, shape)
    i, j = np.triu_indices(n, 1)
    xi = ctx.op("tcc.gather", [x, ctx.constant(i.astype(np.int64), "int64")],
                axis=0)
    xj = ctx.op("tcc.gather", [x, ctx.constant(j.astype(np.int64), "int64")],
                axis=0)
    if m == 0:
        return ctx.zeros(dtype, shape)
    return _p_norm(ctx, ctx.binary("sub", xi, xj), [1], float(a["p"]))


@converts(aten._trilinear.default)
def _trilinear(ctx, node):
    """sum over `sumdim` of i1 * i2 * i3, each first given size-1
    dimensions at its `expand` positions (torch.nn.functional.bilinear)."""
    dtype, shape = out_type(node)
    a = args(node)
    ins = [ctx.value(a[k], dtype) for k in range(3)]
    rank = len(ins[0].shape) + len(a[3])
    full = []
    for v, expand in zip(ins, a[3:6]):
        dims = list(v.shape)
        for e in sorted(expand):
            dims.insert(e, 1)
        full.append(ctx.reshape(v, dims))
    p = ctx.binary("mul", ctx.binary("mul", full[0], full[1]), full[2])
    sumdim = sorted(d % rank for d in a[6])
    return ctx.reshape(ctx.reduce("sum", p, sumdim, False), shape) \
        if sumdim else ctx.reshape(p, shape)


@converts(aten.nextafter.default)
def _nextafter(ctx, node):
    """The float after x toward y: x's bits one up (away from zero) or
    down, the smallest subnormal of y's sign from zero, y where x == y."""
    dtype, _ = out_type(node)
    if dtype not in ("float32", "float64"):
        raise Unsupported(f"nextafter of {dtype}")
    bits = "int32" if dtype == "float32" else "int64"
    x, y = ctx.value(node.args[0], dtype), ctx.value(node.args[1], dtype)
    shape = list(np.broadcast_shapes(tuple(x.shape), tuple(y.shape)))
    x, y = ctx.broadcast(x, shape), ctx.broadcast(y, shape)
    zero = ctx.scalar(0.0, dtype)
    b = ctx.op("tcc.bitcast", [x], results=[(bits, shape)])
    away = ctx.compare("eq", ctx.compare("gt", y, x), ctx.compare("gt", x, zero))
    one = ctx.scalar(1, bits)
    b = ctx.select(away, ctx.binary("add", b, one), ctx.binary("sub", b, one))
    r = ctx.op("tcc.bitcast", [b], results=[(dtype, shape)])
    tiny = ctx.op("tcc.bitcast", [ctx.broadcast(one, shape)],
                  results=[(dtype, shape)])
    r = ctx.select(ctx.compare("eq", x, zero),
                   ctx.select(ctx.compare("lt", y, zero),
                              ctx.unary("neg", tiny), tiny), r)
    r = ctx.select(ctx.compare("eq", x, y), y, r)
    nan = ctx.binary("or", _isnan(ctx, x), _isnan(ctx, y))
    return ctx.select(nan, ctx.scalar(float("nan"), dtype), r)


@converts(aten.masked_scatter.default)
def _masked_scatter(ctx, node):
    """x with the places `mask` sets taken, in order, from source's
    elements: the k-th set place reads source's element k (a running count
    of the mask)."""
    dtype, shape = out_type(node)
    a = named(node)
    x = ctx.broadcast(ctx.value(a["self"], dtype), shape)
    mask = ctx.broadcast(ctx.cast(ctx.tensor(a["mask"]), "bool"), shape)
    src = ctx.tensor(a["source"])
    n, m = math.prod(shape), math.prod(src.shape)
    if n == 0 or m == 0:
        return x
    flat = ctx.reshape(mask, [n])
    pos = ctx.binary("sub", ctx.op("tcc.cumsum", [ctx.cast(flat, "int64")],
                                   axis=0), ctx.scalar(1, "int64"))
    pos = ctx.binary("min", ctx.binary("max", pos, ctx.scalar(0, "int64")),
                     ctx.scalar(m - 1, "int64"))
    taken = ctx.op("tcc.gather", [ctx.reshape(ctx.cast(src, dtype), [m]), pos],
                   axis=0)
    return ctx.select(mask, ctx.reshape(taken, shape), x)


class Trimmed:
    """A result whose leading size is known only at run time (aten.nonzero's
    count of set elements): computed at its upper bound as `padded`, of
    which the first `length` (an int64 scalar of the graph) rows hold the
    result. Only a graph output may be one: the caller trims it (see
    importer.Signature.trims)."""

    def __init__(self, padded, length):
        self.padded, self.length = padded, length


# ATen ops whose converters make a Trimmed result.
TRIMMED = {aten.nonzero.default}


def _rowwise(node):
    """Whether `node` takes each row of its first operand to a row of its
    results (so a Trimmed operand makes Trimmed results)."""
    if node.target is aten.unbind.int:
        return (node.args[1] if len(node.args) > 1 else 0) != 0
    return False


def makes_trimmed(node):
    """Whether the converter of `node` makes Trimmed results."""
    if node.target in TRIMMED:
        return True
    if node.target is operator.getitem or _rowwise(node):
        return makes_trimmed(node.args[0])
    return False


# Targets that read the size of a Trimmed result, compare it with a bound
# and assert the comparison (what AOTAutograd records for nonzero's size):
# the bounds hold by construction (0 <= count <= numel).
SIZE_ASSERTIONS = {aten.sym_size.int, aten._assert_scalar.default,
                   operator.ge, operator.le, operator.gt, operator.lt,
                   operator.eq}


def _nonzero_rows(ctx, x):
    """The places where x is not zero, in row-major order, as rows of
    coordinates compacted to the front of an (numel, rank) int64 tensor,
    and their count (an int64 scalar). The k-th set element's row is its
    running count minus one; the others go to a spare row past the end."""
    shape = list(x.shape)
    n, rank = math.prod(shape), len(shape)
    if n == 0:
        return ctx.zeros("int64", [0, rank]), ctx.zeros("int64", [])
    flat = ctx.reshape(x, [n])
    setp = flat if flat.dtype == "bool" else ctx.compare(
        "ne", flat, ctx.scalar(0, flat.dtype))
    running = ctx.op("tcc.cumsum", [ctx.cast(setp, "int64")], axis=0)
    count = ctx.reshape(ctx.slice(running, [n - 1], [1], [1]), [])
    where = ctx.select(setp, ctx.binary("sub", running,
                                        ctx.scalar(1, "int64")),
                       ctx.scalar(n, "int64"))
    linear = ctx.op("tcc.scatter",
                    [ctx.zeros("int64", [n + 1]), where,
                     ctx.constant(np.arange(n), "int64")], axis=0,
                    reduction=enum(0))
    linear = ctx.reshape(ctx.slice(linear, [0], [1], [n]), [n, 1])
    if rank == 0:
        return ctx.zeros("int64", [1, 0]), count
    strides = [math.prod(shape[d + 1:]) for d in range(rank)]
    coords = ctx.binary("div", linear, ctx.constant(
        np.array([strides]), "int64"))
    coords = ctx.op("tcc.rem", [coords, ctx.constant(np.array([shape]),
                                                     "int64")])
    return coords, count


def _size_assertion(ctx, node):
    """Nothing to compute: the bounds asserted hold by construction."""
    return None


for _target in SIZE_ASSERTIONS:
    TABLE[_target] = _size_assertion

# Integer arithmetic on sizes (a dynamic batch times a row count, for a
# view's shape): its value is no tensor. The ops that take shapes (view,
# reshape, expand) read them from their results' types, where a dynamic
# dimension is -1; an op that needs such a size as a value is refused
# (Context.tensor: it has no value).
SIZE_ARITHMETIC = {operator.mul, operator.add, operator.sub,
                   operator.floordiv, operator.neg, torch.sym_max,
                   torch.sym_min} | (
                       {torch.sym_sum} if hasattr(torch, "sym_sum") else set())


def _size_arithmetic_reason(node):
    v = _val(node)
    if isinstance(v, int) or is_dynamic_dim(v):
        return None
    return f"{_name(node.target)} of a size that depends on the data"


for _target in SIZE_ARITHMETIC:
    TABLE[_target] = _size_assertion


@converts(aten.nonzero.default)
def _nonzero(ctx, node):
    """Coordinates of the set elements: their number is known only at run
    time, so the result is Trimmed (a graph output only)."""
    rows, count = _nonzero_rows(ctx, ctx.tensor(named(node)["self"]))
    return Trimmed(rows, count)


@converts(aten.nonzero_static.default)
def _nonzero_static(ctx, node):
    """nonzero's rows in a result of `size` rows: cut there, or filled
    with `fill_value` past the count."""
    a = named(node)
    rows, count = _nonzero_rows(ctx, ctx.tensor(a["self"]))
    n, rank = rows.shape
    size = int(a["size"])
    if size <= n:
        rows = ctx.slice(rows, [0, 0], [1, 1], [size, rank])
    else:
        rows = ctx.op("tcc.concat", [rows, ctx.zeros("int64", [size - n,
                                                               rank])],
                      axis=0)
    index = ctx.constant(np.arange(size).reshape(size, 1), "int64")
    fill = ctx.scalar(int(a["fill_value"]), "int64")
    return ctx.select(ctx.compare("lt", index, count), rows, fill)


_HISTOGRAM_LIMIT = 1 << 26  # elements x bins of the one-hot comparison


@converts(aten.histc.default)
def _histc(ctx, node):
    """Counts of x in `bins` equal bins over [min, max] (the data's range
    where both are 0; widened by one each way where it is one point),
    the top edge in the last bin, values outside not counted."""
    dtype, shape = out_type(node)
    a = named(node)
    x = ctx.tensor(a["self"])
    bins, lo, hi = a["bins"], float(a["min"]), float(a["max"])
    n = math.prod(x.shape)
    if n * bins > _HISTOGRAM_LIMIT:
        raise Unsupported(f"histc of {n} elements into {bins} bins")
    if n == 0:
        return ctx.zeros(dtype, shape)
    flat = ctx.reshape(x, [n])
    if lo == hi:
        if lo == 0:
            low = ctx.reduce("min", flat, [0], False)
            high = ctx.reduce("max", flat, [0], False)
        else:
            low, high = ctx.scalar(lo, dtype), ctx.scalar(hi, dtype)
        same = ctx.compare("eq", low, high)
        low = ctx.select(same, ctx.binary("sub", low, ctx.scalar(1, dtype)),
                         low)
        high = ctx.select(same, ctx.binary("add", high, ctx.scalar(1, dtype)),
                          high)
    else:
        low, high = ctx.scalar(lo, dtype), ctx.scalar(hi, dtype)
    inside = ctx.binary("and", ctx.compare("ge", flat, low),
                        ctx.compare("le", flat, high))
    pos = ctx.unary("floor", ctx.binary("div", ctx.binary(
        "mul", ctx.binary("sub", flat, low), ctx.scalar(bins, dtype)),
        ctx.binary("sub", high, low)))
    pos = ctx.binary("min", pos, ctx.scalar(bins - 1, dtype))
    pos = ctx.select(inside, pos, ctx.scalar(-1, dtype))
    iota = ctx.constant(np.arange(bins, dtype=np.float64).reshape(bins, 1),
                        dtype)
    hit = ctx.compare("eq", iota, ctx.reshape(pos, [1, n]))
    return ctx.reduce("sum", ctx.cast(hit, dtype), [1], False)


# -- segments and bags -------------------------------------------------------

def _segment_masks(ctx, starts, ends, n):
    """[k, n] bools: element i lies in segment j = [starts[j], ends[j])."""
    iota = ctx.constant(np.arange(n, dtype=np.int64).reshape(1, n), "int64")
    k = starts.shape[0]
    s = ctx.reshape(ctx.cast(starts, "int64"), [k, 1])
    e = ctx.reshape(ctx.cast(ends, "int64"), [k, 1])
    return ctx.binary("and", ctx.compare("ge", iota, s),
                      ctx.compare("lt", iota, e))


def _masked_reduce(ctx, mask, x, kind, dtype):
    """Per segment (mask [k, n]) the `kind` reduction of x [n, rest...] over
    its members, and how many there are."""
    k, n = mask.shape
    rest = list(x.shape[1:])
    m = ctx.reshape(mask, [k, n] + [1] * len(rest))
    xs = ctx.reshape(x, [1, n] + rest)
    ident = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": float("-inf"),
             "min": float("inf")}[kind]
    op = {"mean": "sum"}.get(kind, kind)
    picked = ctx.select(m, xs, ctx.scalar(ident, dtype))
    r = ctx.reduce(op, picked, [1], False)
    count = ctx.reduce("sum", ctx.cast(mask, dtype), [1], False)
    return r, ctx.reshape(count, [k] + [1] * len(rest))


@converts(aten.segment_reduce.default)
def _segment_reduce(ctx, node):
    """Reductions over consecutive segments of `data` along `axis` (their
    lengths or offsets given), `initial` taking part in each."""
    dtype, shape = out_type(node)
    a = named(node)
    if dtype not in FLOATS:
        raise Unsupported(f"segment_reduce of {dtype}")
    x = ctx.tensor(a["data"])
    axis = a["axis"] % len(x.shape)
    kind = a["reduce"]
    if a.get("indices") is not None:
        raise Unsupported("segment_reduce by indices")
    if a.get("lengths") is not None:
        lengths = ctx.tensor(a["lengths"])
        if len(lengths.shape) != 1:
            raise Unsupported("segment_reduce with batched lengths")
        ends = ctx.op("tcc.cumsum", [ctx.cast(lengths, "int64")], axis=0)
        starts = ctx.binary("sub", ends, ctx.cast(lengths, "int64"))
    else:
        offsets = ctx.tensor(a["offsets"])
        if len(offsets.shape) != 1:
            raise Unsupported("segment_reduce with batched offsets")
        k = offsets.shape[0] - 1
        starts = ctx.slice(offsets, [0], [1], [k])
        ends = ctx.slice(offsets, [1], [1], [k])
    k = starts.shape[0]
    v, back = _last_axis(ctx, x, axis)
    rank = len(v.shape)
    v = ctx.transpose(v, [rank - 1] + list(range(rank - 1)))  # axis first
    if k == 0 or 0 in v.shape:
        return ctx.zeros(dtype, shape)
    mask = _segment_masks(ctx, starts, ends, v.shape[0])
    r, count = _masked_reduce(ctx, mask, v, kind, dtype)
    init = a.get("initial")
    if init is not None:
        i = ctx.scalar(float(init), dtype)
        r = {"sum": lambda: ctx.binary("add", r, i),
             "mean": lambda: ctx.binary("add", r, i),
             "prod": lambda: ctx.binary("mul", r, i),
             "max": lambda: ctx.binary("max", r, i),
             "min": lambda: ctx.binary("min", r, i)}[kind]()
    if kind == "mean":
        mean = ctx.binary("div", r, count)
        if init is not None:  # an empty segment's mean is `initial`
            empty = ctx.compare("eq", count, ctx.scalar(0, dtype))
            mean = ctx.select(empty, ctx.broadcast(r, mean.shape), mean)
        r = mean
    # Back from [k, rest...] to data's order with the segments at `axis`.
    r = ctx.transpose(r, list(range(1, rank)) + [0])
    return ctx.reshape(ctx.transpose(r, back), shape)


@converts(aten._embedding_bag_forward_only.default,
          aten._embedding_bag.default)
def _embedding_bag(ctx, node):
    """Sums, means or maxima of the embedding rows each bag's indices pick
    (bag b: indices[offsets[b]:offsets[b + 1]]), weighted per index when
    asked, padding_idx's rows left out; only the bags' values are made."""
    a = named(node)
    dtype, shape = out_type(node, 0)
    w = ctx.tensor(a["weight"])
    idx = ctx.cast(ctx.tensor(a["indices"]), "int64")
    offsets = ctx.cast(ctx.tensor(a["offsets"]), "int64")
    mode = {0: "sum", 1: "mean", 2: "max"}[a["mode"]]
    for k in (1, 2, 3):
        if _reads_output(node, k):
            raise Unsupported("embedding_bag's bookkeeping results")
    n = math.prod(idx.shape)
    b = shape[0]
    if n == 0 or b == 0:
        return ctx.zeros(dtype, shape), None, None, None
    idx = ctx.reshape(idx, [n])
    starts = ctx.slice(offsets, [0], [1], [b])
    if a["include_last_offset"]:
        ends = ctx.slice(offsets, [1], [1], [b])
    else:
        rest = ctx.slice(offsets, [1], [1], [b - 1]) if b > 1 else None
        end = ctx.constant(np.array([n], dtype=np.int64), "int64")
        ends = ctx.op("tcc.concat", [rest, end], axis=0) if rest is not None \
            else end
    mask = _segment_masks(ctx, starts, ends, n)
    pad = a.get("padding_idx")
    if pad is not None and pad >= 0:
        keep = ctx.compare("ne", idx, ctx.scalar(pad, "int64"))
        mask = ctx.binary("and", mask, ctx.reshape(keep, [1, n]))
    rows = ctx.op("tcc.gather", [w, idx], axis=0)
    if a.get("per_sample_weights") is not None:
        psw = ctx.reshape(ctx.tensor(a["per_sample_weights"]), [n, 1])
        rows = ctx.binary("mul", rows, psw)
    r, count = _masked_reduce(ctx, mask, rows, mode, dtype)
    if mode == "mean":
        r = ctx.binary("div", r, ctx.binary("max", count,
                                            ctx.scalar(1, dtype)))
    elif mode == "max":  # an empty bag is zeros
        r = ctx.select(ctx.compare("eq", count, ctx.scalar(0, dtype)),
                       ctx.scalar(0, dtype), r)
    return r, None, None, None


# -- grid sampling -----------------------------------------------------------

def _grid_check(node):
    a = args(node)
    if a[2] not in (0, 1):
        return "grid sampling with bicubic interpolation"
    return None


def _grid_coordinate(ctx, g, size, padding, align):
    """A grid coordinate in [-1, 1] as a position along a dimension of
    `size`, after the padding mode's clipping or reflection."""
    c = lambda v: ctx.scalar(v, g.dtype)  # noqa: E731
    b = ctx.binary
    if align:
        x = b("mul", b("div", b("add", g, c(1.0)), c(2.0)), c(size - 1.0))
    else:
        x = b("div", b("sub", b("mul", b("add", g, c(1.0)), c(float(size))),
                       c(1.0)), c(2.0))

    def clip(v):
        return b("min", b("max", v, c(0.0)), c(size - 1.0))
    if padding == 1:
        return clip(x)
    if padding == 2:
        low, high = (0.0, 2.0 * (size - 1)) if align else \
            (-1.0, 2.0 * size - 1)
        if low == high:
            return ctx.broadcast(c(0.0), g.shape)
        lo, span = low / 2, (high - low) / 2
        d = ctx.unary("abs", b("sub", x, c(lo)))
        flips = ctx.unary("floor", b("div", d, c(span)))
        extra = b("sub", d, b("mul", flips, c(span)))
        half = b("mul", flips, c(0.5))
        even = ctx.compare("eq", ctx.unary("floor", half), half)
        x = ctx.select(even, b("add", extra, c(lo)),
                       b("add", b("sub", c(span), extra), c(lo)))
        return clip(x)
    return x


@converts(aten.grid_sampler_2d.default, aten.grid_sampler_3d.default,
          check=_grid_check)
def _grid_sampler(ctx, node):
    """Samples of input [N, C, spatial...] at the grid's points [N,
    out..., (x, y[, z])]: bilinear (trilinear) weights of the surrounding
    corners or the nearest one, each read by one gather from the flattened
    input; points outside read zeros."""
    dtype, shape = out_type(node)
    a = args(node)
    x, grid = ctx.value(a[0], dtype), ctx.value(a[1], dtype)
    mode, padding, align = a[2], a[3], bool(a[4])
    n, ch = x.shape[:2]
    sizes = list(x.shape[2:])
    dims = len(sizes)
    out = list(grid.shape[1:-1])
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    if 0 in sizes:
        raise Unsupported("grid sampling of an empty input")
    coords = []  # per spatial dimension, [N, out...]
    for k in range(dims):
        g = ctx.slice(grid, [0] * (len(grid.shape) - 1) + [k],
                      [1] * len(grid.shape), [n] + out + [1])
        g = ctx.reshape(g, [n] + out)
        coords.insert(0, _grid_coordinate(ctx, g, sizes[dims - 1 - k],
                                          padding, align))
    strides = [math.prod(sizes[i + 1:]) for i in range(dims)]
    plane = math.prod(sizes)
    base = ctx.constant((np.arange(n * ch, dtype=np.int64) * plane).reshape(
        [n, ch] + [1] * dims), "int64")
    flat = ctx.reshape(x, [n * ch * plane])
    zero = ctx.scalar(0.0, dtype)

    def read(corner):
        """Input values at integer positions (float tensors), 0 outside."""
        inside, at = None, None
        for d, p in enumerate(corner):
            ok = ctx.binary("and", ctx.compare("ge", p, zero), ctx.compare(
                "le", p, ctx.scalar(sizes[d] - 1.0, dtype)))
            inside = ok if inside is None else ctx.binary("and", inside, ok)
            q = ctx.cast(ctx.binary("min", ctx.binary("max", p, zero),
                                    ctx.scalar(sizes[d] - 1.0, dtype)),
                         "int64")
            q = ctx.binary("mul", q, ctx.scalar(strides[d], "int64"))
            at = q if at is None else ctx.binary("add", at, q)
        at = ctx.binary("add", ctx.reshape(at, [n, 1] + out), base)
        v = ctx.op("tcc.gather", [flat, at], axis=0)
        return ctx.select(ctx.reshape(inside, [n, 1] + out), v, zero)

    if mode == 1:  # nearest, ties to even
        return read([ctx.unary("round", p) for p in coords])
    lows = [ctx.unary("floor", p) for p in coords]
    fracs = [ctx.binary("sub", p, lo) for p, lo in zip(coords, lows)]
    one = ctx.scalar(1.0, dtype)
    total = None
    for corner in range(1 << dims):
        pos, weight = [], None
        for d in range(dims):
            up = (corner >> (dims - 1 - d)) & 1
            pos.append(ctx.binary("add", lows[d], one) if up else lows[d])
            w = fracs[d] if up else ctx.binary("sub", one, fracs[d])
            weight = w if weight is None else ctx.binary("mul", weight, w)
        term = ctx.binary("mul", read(pos), ctx.reshape(weight, [n, 1] + out))
        total = term if total is None else ctx.binary("add", total, term)
    return total


# -- strided views -------------------------------------------------------------

def _strided_positions(node, x_val, size, stride, offset):
    """The flat positions in x's (row-major, dense) storage of the elements
    of the view `size`/`stride`/`offset`; Unsupported where x is not its own
    dense storage or the view reads past it."""
    if not x_val.is_contiguous() or x_val.storage_offset() != 0:
        raise Unsupported("as_strided of a tensor that is not its own "
                          "dense storage")
    offset = 0 if offset is None else int(offset)
    where = np.full([int(d) for d in size], offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        view = [1] * len(size)
        view[d] = int(n)
        where = where + (np.arange(int(n), dtype=np.int64) * int(st)).reshape(
            view)
    if where.size and (where.min() < 0 or where.max() >= x_val.numel()):
        raise Unsupported("as_strided reads past the tensor's elements")
    return where


def _as_strided_check(node):
    a = named(node)
    x = _val(a["self"])
    try:
        _strided_positions(node, x, a["size"], a["stride"],
                           a.get("storage_offset"))
    except Unsupported as e:
        return str(e)
    return None


@converts(aten.as_strided.default, aten.as_strided_copy.default,
          check=_as_strided_check)
def _as_strided(ctx, node):
    """A strided view of a dense tensor: a gather of the positions it
    reads."""
    a = named(node)
    dtype, shape = out_type(node)
    x = ctx.tensor(a["self"])
    where = _strided_positions(node, _val(a["self"]), a["size"], a["stride"],
                               a.get("storage_offset"))
    if where.size == 0:
        return ctx.zeros(dtype, shape)
    flat = ctx.reshape(x, [math.prod(x.shape)])
    return ctx.reshape(ctx.op("tcc.gather", [flat, ctx.constant(
        where.reshape(-1), "int64")], axis=0), shape)


@converts(aten.as_strided_scatter.default, check=_as_strided_check)
def _as_strided_scatter(ctx, node):
    a = named(node)
    x, src = ctx.tensor(a["self"]), ctx.tensor(a["src"])
    where = _strided_positions(node, _val(a["self"]), a["size"], a["stride"],
                               a.get("storage_offset"))
    return _scatter_positions(ctx, x, src, where)


# The rest of the table: linear algebra, orthogonal polynomials and special
# functions register themselves when imported.
from . import fft, linalg, polynomials, special  # noqa: E402,F401
