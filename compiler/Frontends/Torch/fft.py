"""Complex tensors and ATen's FFTs.

A complex tensor is a tcc tensor of its real type with a last dimension of
2 (real, imaginary), which is also torch's memory layout of it: a complex
graph result is a view (`torch.view_as_complex`) of what the artifact
writes. Only the converters here take or make complex tensors
(`complex_ok`); any other op on one is refused, so nothing reads a pair as
two reals by mistake.

The FFTs are discrete Fourier transforms along each transformed dimension
as one matrix product with the (cos, sin) table of that length, computed
in float64 and rounded once: O(n^2) a dimension where FFT algorithms take
O(n log n), exact to float32 for the lengths models use.
"""

import math

import numpy as np
import torch

from . import ops
from .ops import Unsupported, aten, args, converts, named

_REAL = {torch.complex64: "float32", torch.complex128: "float64"}


def _is_complex(arg):
    v = ops._val(arg) if isinstance(arg, torch.fx.Node) else None
    return isinstance(v, torch.Tensor) and v.dtype.is_complex


def _split(ctx, z):
    """(re, im) of a pair tensor."""
    shape = list(z.shape[:-1])
    rank = len(z.shape)

    def part(k):
        return ctx.reshape(ctx.slice(z, [0] * (rank - 1) + [k], [1] * rank,
                                     shape + [1]), shape)
    return part(0), part(1)


def _pair(ctx, re, im):
    shape = list(np.broadcast_shapes(tuple(re.shape), tuple(im.shape)))
    re, im = ctx.broadcast(re, shape), ctx.broadcast(im, shape)
    return ctx.op("tcc.concat", [ctx.reshape(re, shape + [1]),
                                 ctx.reshape(im, shape + [1])],
                  axis=len(shape))


def _out(node, index=None):
    """(real dtype, complex shape) of a complex result."""
    v = ops._val(node)
    if index is not None:
        v = v[index]
    return _REAL[v.dtype], [int(d) for d in v.shape]


# -- conversions and views ---------------------------------------------------

_plain_to_copy = ops.TABLE[aten._to_copy.default]


@converts(aten._to_copy.default, aten.to.dtype, complex_ok=True)
def _to_copy(ctx, node):
    want = ops._val(node).dtype
    src = node.args[0]
    if not want.is_complex and not _is_complex(src):
        return _plain_to_copy(ctx, node)
    x = ctx.tensor(src)
    if want.is_complex:
        real = _REAL[want]
        if _is_complex(src):
            return ctx.cast(x, real)
        x = ctx.cast(x, real)
        return _pair(ctx, x, ctx.scalar(0, real))
    re, _ = _split(ctx, x)  # complex to real keeps the real part
    return ctx.cast(re, ops.tcc_dtype(want))


_plain_identity = ops.TABLE[aten.clone.default]


@converts(aten.clone.default, aten.alias.default, aten.detach.default,
          aten.contiguous.default, aten.view_as_real.default,
          aten.view_as_complex.default, aten.resolve_conj.default,
          complex_ok=True)
def _identity(ctx, node):
    if node.target in (aten.view_as_real.default,
                       aten.view_as_complex.default) or \
            _is_complex(node.args[0]):
        return ctx.tensor(node.args[0])  # the same pairs
    return _plain_identity(ctx, node)


@converts(aten._conj.default, aten._conj_physical.default,
          aten.conj_physical.default, complex_ok=True)
def _conj(ctx, node):
    x = ctx.tensor(node.args[0])
    if not _is_complex(node.args[0]):
        return x
    re, im = _split(ctx, x)
    return _pair(ctx, re, ctx.unary("neg", im))


@converts(aten.complex.default, complex_ok=True)
def _complex(ctx, node):
    real, _ = _out(node)
    return _pair(ctx, ctx.cast(ctx.tensor(node.args[0]), real),
                 ctx.cast(ctx.tensor(node.args[1]), real))


@converts(aten.polar.default, complex_ok=True)
def _polar(ctx, node):
    real, _ = _out(node)
    r = ctx.cast(ctx.tensor(node.args[0]), real)
    t = ctx.cast(ctx.tensor(node.args[1]), real)
    return _pair(ctx, ctx.binary("mul", r, ctx.unary("cos", t)),
                 ctx.binary("mul", r, ctx.unary("sin", t)))


@converts(aten.real.default, aten.imag.default, complex_ok=True)
def _real_imag(ctx, node):
    x = ctx.tensor(node.args[0])
    if not _is_complex(node.args[0]):
        return x
    re, im = _split(ctx, x)
    return re if node.target == aten.real.default else im


_plain_slice = ops.TABLE[aten.slice.Tensor]


@converts(aten.slice.Tensor, complex_ok=True)
def _slice(ctx, node):
    if not _is_complex(node.args[0]):
        return _plain_slice(ctx, node)
    a = args(node)
    x = ctx.tensor(a[0])
    rank = len(x.shape) - 1
    dim = a[1] % rank
    n = x.shape[dim]
    start = 0 if a[2] is None else a[2]
    start = min(max(start + n if start < 0 else start, 0), n)
    _, shape = _out(node)
    offsets = [0] * (rank + 1)
    steps = [1] * (rank + 1)
    offsets[dim] = start if shape[dim] else 0
    steps[dim] = a[4]
    return ctx.slice(x, offsets, steps, shape + [2])


_plain_pad = ops.TABLE[aten.constant_pad_nd.default]


@converts(aten.constant_pad_nd.default, complex_ok=True)
def _pad(ctx, node):
    if not _is_complex(node.args[0]):
        return _plain_pad(ctx, node)
    value = node.args[2] if len(node.args) > 2 else 0
    if value != 0:
        raise Unsupported("padding a complex tensor with a value other "
                          "than 0")
    x, low, high = ops._cropped(ctx, ctx.tensor(node.args[0]),
                                [0, 0] + list(node.args[1]))
    if all(p == 0 for p in low + high):
        return x
    return ctx.op("tcc.pad", [x], low=low, high=high, mode=ops.enum(0),
                  value=0.0)


# -- discrete Fourier transforms --------------------------------------------

def _last(ctx, v, axis):
    """v with `axis` moved last, and the permutation back."""
    rank = len(v.shape)
    perm = [d for d in range(rank) if d != axis] + [axis]
    back = [perm.index(d) for d in range(rank)]
    return ctx.transpose(v, perm), back


def _matmul(ctx, v, table):
    """v [..., n] times a float64 table [n, m]."""
    if v is None:
        return None
    lead = list(v.shape[:-1])
    flat = ctx.reshape(v, [max(math.prod(lead), 1), v.shape[-1]])
    r = ctx.op("tcc.matmul", [flat, ctx.constant(table, "float64")])
    return ctx.reshape(r, lead + [table.shape[1]])


def _dft(ctx, re, im, axis, inverse, onesided=False):
    """The DFT (unnormalized) of re + i im (im None: real) along `axis`;
    onesided keeps the first n // 2 + 1 frequencies."""
    n = re.shape[axis]
    m = n // 2 + 1 if onesided else n
    k = np.arange(n, dtype=np.float64)
    angle = 2 * np.pi * np.outer(k, k[:m] if m else k[:0]) / max(n, 1)
    cos, sin = np.cos(angle), np.sin(angle)
    if inverse:
        sin = -sin
    re, back = _last(ctx, re, axis)
    if im is not None:
        im, _ = _last(ctx, im, axis)
    # (re + i im)(cos - i sin) = re cos + im sin + i (im cos - re sin)
    rc, rs = _matmul(ctx, re, cos), _matmul(ctx, re, sin)
    out_re, out_im = rc, ctx.unary("neg", rs)
    if im is not None:
        out_re = ctx.binary("add", out_re, _matmul(ctx, im, sin))
        out_im = ctx.binary("add", _matmul(ctx, im, cos), out_im)
    return ctx.transpose(out_re, back), ctx.transpose(out_im, back)


def _normalized(ctx, re, im, norm, sizes):
    count = math.prod(sizes)
    if norm == 0 or count == 0:
        return re, im
    scale = 1.0 / (math.sqrt(count) if norm == 1 else count)
    s = ctx.scalar(scale, "float64")
    return ctx.binary("mul", re, s), (None if im is None else
                                      ctx.binary("mul", im, s))


def _empty(ctx, node, real, shape):
    return ctx.zeros(real, shape)


@converts(aten._fft_r2c.default, complex_ok=True)
def _fft_r2c(ctx, node):
    a = named(node)
    real, shape = _out(node)
    x = ctx.tensor(a["self"])
    if 0 in shape:
        return _empty(ctx, node, real, shape + [2])
    dims = [d % len(x.shape) for d in a["dim"]]
    re, im = ctx.cast(x, "float64"), None
    sizes = [x.shape[d] for d in dims]
    re, im = _dft(ctx, re, im, dims[-1], False, bool(a["onesided"]))
    for d in dims[:-1]:
        re, im = _dft(ctx, re, im, d, False)
    re, im = _normalized(ctx, re, im, a["normalization"], sizes)
    return ctx.cast(_pair(ctx, re, im), real)


@converts(aten._fft_c2c.default, complex_ok=True)
def _fft_c2c(ctx, node):
    a = named(node)
    real, shape = _out(node)
    if 0 in shape:
        return _empty(ctx, node, real, shape + [2])
    re, im = _split(ctx, ctx.cast(ctx.tensor(a["self"]), "float64"))
    dims = [d % len(shape) for d in a["dim"]]
    for d in dims:
        re, im = _dft(ctx, re, im, d, not a["forward"])
    re, im = _normalized(ctx, re, im, a["normalization"],
                         [shape[d] for d in dims])
    return ctx.cast(_pair(ctx, re, im), real)


@converts(aten._fft_c2r.default, complex_ok=True)
def _fft_c2r(ctx, node):
    """The inverse of a onesided transform: complex inverse DFTs along all
    but the last dimension, then the real signal of `last_dim_size` from
    the first n // 2 + 1 frequencies of the last (the others being their
    conjugates)."""
    a = named(node)
    dtype, shape = ops.out_type(node)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    re, im = _split(ctx, ctx.cast(ctx.tensor(a["self"]), "float64"))
    dims = [d % len(shape) for d in a["dim"]]
    for d in dims[:-1]:
        re, im = _dft(ctx, re, im, d, True)
    last = dims[-1]
    n = int(a["last_dim_size"])
    half = n // 2 + 1
    re, back = _last(ctx, re, last)
    im, _ = _last(ctx, im, last)
    have = re.shape[-1]
    if have < half:
        pad = [0] * (len(re.shape) - 1)
        re = ctx.op("tcc.pad", [re], low=pad + [0], high=pad + [half - have],
                    mode=ops.enum(0), value=0.0)
        im = ctx.op("tcc.pad", [im], low=pad + [0], high=pad + [half - have],
                    mode=ops.enum(0), value=0.0)
    elif have > half:
        lead = list(re.shape[:-1])
        re = ctx.slice(re, [0] * len(re.shape), [1] * len(re.shape),
                       lead + [half])
        im = ctx.slice(im, [0] * len(im.shape), [1] * len(im.shape),
                       lead + [half])
    k = np.arange(half, dtype=np.float64)
    t = np.arange(n, dtype=np.float64)
    weight = np.full(half, 2.0)
    weight[0] = 1.0
    if n % 2 == 0:
        weight[-1] = 1.0
    angle = 2 * np.pi * np.outer(k, t) / n
    x = ctx.binary("sub", _matmul(ctx, re, weight[:, None] * np.cos(angle)),
                   _matmul(ctx, im, weight[:, None] * np.sin(angle)))
    x = ctx.transpose(x, back)
    sizes = [shape[d] for d in dims]
    x, _ = _normalized(ctx, x, None, a["normalization"], sizes)
    return ctx.cast(x, dtype)


# -- shape ops of complex tensors (the pairs stay last) -----------------------

def _complex_lift(*overloads):
    """Registers a complex-taking version of structural converters: a
    complex input is moved through with its pairs last; real ones go to the
    plain converter."""
    plain = {o: ops.TABLE[o] for o in overloads}

    def register(fn):
        def convert(ctx, node):
            if not _is_complex(node.args[0]):
                return plain[node.target](ctx, node)
            return fn(ctx, node)
        converts(*overloads, complex_ok=True)(convert)
        return fn
    return register


@_complex_lift(aten.transpose.int)
def _transpose(ctx, node):
    x = ctx.tensor(node.args[0])
    rank = len(x.shape) - 1
    perm = list(range(rank + 1))
    a, b = node.args[1] % rank, node.args[2] % rank
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.transpose(x, perm)


@_complex_lift(aten.permute.default)
def _permute(ctx, node):
    x = ctx.tensor(node.args[0])
    rank = len(x.shape) - 1
    return ctx.transpose(x, [d % rank for d in node.args[1]] + [rank])


@_complex_lift(aten.view.default, aten._unsafe_view.default,
               aten.reshape.default, aten.squeeze.dim, aten.squeeze.dims,
               aten.squeeze.default, aten.unsqueeze.default)
def _reshape(ctx, node):
    _, shape = _out(node)
    return ctx.reshape(ctx.tensor(node.args[0]), shape + [2])
