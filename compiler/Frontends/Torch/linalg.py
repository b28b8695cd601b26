"""ATen's dense linear algebra as tcc graphs (see docs/torch-ops.md).

Matrix sizes are static, so the direct methods (LU with partial pivoting,
Cholesky, triangular solves, Householder QR) unroll into one step per
column, each step whole-tensor tcc ops over the batch. Registered into the
one table of ops.py.

Conventions of this file:
  * the batch dimensions are flattened into one, so a stack of matrices is
    [B, m, n]; results are reshaped (and broadcast) back at the end;
  * a step never branches on the data: where the batch's matrices differ
    (a pivot row, a zero pivot) it picks with one-hot masks and selects,
    so every matrix takes its own path;
  * float32 matrices are computed in float64 and rounded at the end: LAPACK
    computes float32 in float32, in another order, and the float64 result
    is the closer to both the exact one and torch's;
  * the factorizations follow LAPACK's conventions (getrf's partial
    pivoting, the first row of largest magnitude; geqrf's Householder
    signs), so factors and pivots equal torch's, not just their products;
  * the compiled code cannot raise: where torch checks its result (the
    info of linalg.inv, linalg.cholesky, linalg.solve on a singular or
    indefinite matrix) tcc returns what the arithmetic gives (inf, nan).
"""

import math

import numpy as np
import torch

from . import ops
from .ops import aten, converts, named, out_type

# The largest matrix dimension tcc unrolls: each column is a step of a few
# tens of ops, so larger matrices would make graphs of thousands of ops.
MAX_SIZE = 64
WORK = "float64"


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

def _shape_of(arg):
    v = ops._val(arg)
    return [int(d) for d in v.shape], v.dtype


def _matrix_check(*names):
    """Refuses a node whose matrix arguments `names` are larger than
    MAX_SIZE or not float32 / float64."""

    def check(node):
        a = named(node)
        for name in names:
            arg = a.get(name)
            if not isinstance(arg, torch.fx.Node):
                continue
            shape, dtype = _shape_of(arg)
            if dtype not in (torch.float32, torch.float64):
                return f"{node.target} of {dtype} (tcc takes float32 and " \
                    "float64)"
            big = max(shape[-2:], default=0)
            if big > MAX_SIZE:
                return (f"{node.target} of a {'x'.join(map(str, shape[-2:]))}"
                        f" matrix: tcc unrolls the factorization one step per "
                        f"column, for matrices up to {MAX_SIZE}x{MAX_SIZE}")
        return None

    return check


def _lu_check(node):
    if not named(node)["pivot"]:
        return "LU without pivoting (torch has none on the CPU)"
    return _matrix_check("A")(node)


def _qr_check(node):
    mode = named(node)["mode"]
    if mode not in ("reduced", "complete", "r"):
        return f"linalg.qr mode {mode!r}"
    return _matrix_check("A")(node)


# ---------------------------------------------------------------------------
# Building blocks on stacks of matrices [B, m, n] (work dtype)
# ---------------------------------------------------------------------------

def _s(ctx, number, dtype=WORK):
    return ctx.scalar(number, dtype)


def _mask(ctx, array):
    return ctx.constant(np.asarray(array, dtype=bool), "bool")


def _rows(m, n=1):
    """Row numbers as [1, m, 1] and column numbers as [1, 1, n]."""
    return np.arange(m).reshape(1, m, 1), np.arange(n).reshape(1, 1, n)


def _cut(ctx, v, starts, sizes):
    """The window of v at `starts` of `sizes` (unit steps)."""
    return ctx.slice(v, list(starts), [1] * len(starts), list(sizes))


def _pick(ctx, v, axis, index):
    """v's entries at `index` along `axis` (kept, of size 1) as a masked
    sum: a tensor of its own, where a slice would be a view of v. A step
    that writes a matrix reads that matrix's own rows and columns this way:
    tcc's memory planner may write an elementwise result over an input
    that dies there while a view of the same buffer still feeds the kernel.
    The sum of one entry and zeros is that entry exactly."""
    rank = len(v.shape)
    hot = np.zeros([1] * axis + [v.shape[axis]] + [1] * (rank - axis - 1),
                   dtype=bool)
    hot.flat[index] = True
    return ctx.reduce("sum", ctx.select(_mask(ctx, hot), v,
                                        ctx.zeros(v.dtype, [])), [axis], True)


def _row(ctx, a, i):
    """Row i of the matrices a, [B, 1, n] (a slice: see _pick)."""
    b, _, n = a.shape
    return _cut(ctx, a, [0, i, 0], [b, 1, n])


def _t(ctx, a):
    """The matrices transposed."""
    return ctx.transpose(a, [0, 2, 1])


def _take_rows(ctx, v, index):
    """Per matrix, the rows `index` ([B, q] int64) of v ([B, m, ...]): a
    gather of the flattened stack (of a v that is not written after: see
    _pick_at)."""
    b, m = v.shape[0], v.shape[1]
    rest = list(v.shape[2:])
    flat = ctx.reshape(v, [b * m] + rest)
    at = ctx.binary("add", index, ctx.constant(
        (np.arange(b, dtype=np.int64) * m).reshape(b, 1), "int64"))
    return ctx.op("tcc.gather", [flat, at], axis=0)


def _swap_rows(ctx, v, j, p):
    """v ([B, m, ...]) with, per matrix, rows j and p ([B] int64) swapped."""
    at = ctx.reshape(p, [v.shape[0], 1] + [1] * (len(v.shape) - 2))
    return _swapped(ctx, v, j, at, _pick(ctx, v, 1, j), _pick_at(ctx, v, at))


def _pick_at(ctx, v, at):
    """Per matrix, the row `at` ([B, 1, ...] int64) of v ([B, m, ...]), as
    a masked sum (a gather would read v through a view, see _pick)."""
    m = v.shape[1]
    rows = np.arange(m).reshape([1, m] + [1] * (len(v.shape) - 2))
    hot = ctx.compare("eq", ctx.constant(rows, "int64"), at)
    return ctx.reduce("sum", ctx.select(hot, v, ctx.zeros(v.dtype, [])),
                      [1], True)


def _swapped(ctx, v, j, p, row_j, row_p):
    """v with row j replaced by row_p and row p (int64, broadcasting
    against v's rows) by row_j."""
    m = v.shape[1]
    at_j = np.zeros([1, m] + [1] * (len(v.shape) - 2), dtype=bool)
    at_j[0, j] = True
    at_p = ctx.compare("eq", ctx.constant(np.arange(m).reshape(at_j.shape),
                                          "int64"), p)
    return ctx.select(_mask(ctx, at_j), row_p, ctx.select(at_p, row_j, v))


def _identity(ctx, b, m, n, dtype=WORK):
    return ctx.broadcast(ctx.constant(np.eye(m, n)[None], dtype), [b, m, n])


def _triangle(ctx, a, lower, diagonal=True):
    """The lower (or upper) triangle of the matrices, zeros elsewhere."""
    _, m, n = a.shape
    i, j = _rows(m, n)
    keep = (i > j) | ((i == j) & diagonal) if lower else \
        (i < j) | ((i == j) & diagonal)
    return ctx.select(_mask(ctx, keep), a, ctx.zeros(a.dtype, []))


def _diagonal(ctx, a):
    """The diagonals of the matrices, [B, min(m, n)]."""
    b, m, n = a.shape
    k = min(m, n)
    flat = ctx.reshape(a, [b, m * n])
    return ctx.slice(flat, [0, 0], [1, n + 1], [b, k])


def _solve_triangular(ctx, t, x, lower, unit):
    """Solves t y = x for y, t [B, n, n] triangular (only its `lower` or
    upper triangle is read; with `unit` not its diagonal either), x
    [B, n, r]: substitution, one row of y per step, that row of x less t's
    row times the rows of y found before (the others still zero), divided
    by the diagonal entry. Only y is written, from slices of t and x."""
    b, n, r = x.shape
    i, j = _rows(n, n)
    y = ctx.zeros(WORK, [b, n, r])
    zero = _s(ctx, 0)
    for k in (range(n) if lower else reversed(range(n))):
        yk = _row(ctx, x, k)
        done = j < k if lower else j > k
        if done.any():
            trow = ctx.select(_mask(ctx, done[:, :1]), _row(ctx, t, k), zero)
            yk = ctx.binary("sub", yk, ctx.op("tcc.matmul", [trow, y]))
        if not unit:
            yk = ctx.binary("div", yk, _cut(ctx, t, [0, k, k], [b, 1, 1]))
        y = ctx.select(_mask(ctx, i == k), yk, y)
    return y


class _Stack:
    """Matrix arguments with their batch dimensions broadcast together and
    flattened: `batch` the broadcast batch shape, `size` its element count,
    `flat(v)` a value as [size, rows, cols] in the work dtype."""

    def __init__(self, ctx, *values):
        self.ctx = ctx
        self.batch = list(torch.broadcast_shapes(
            *[tuple(v.shape[:-2]) for v in values]))
        self.size = math.prod(self.batch)

    def flat(self, v, dtype=WORK):
        ctx = self.ctx
        v = ctx.broadcast(v, self.batch + list(v.shape[-2:]))
        return ctx.cast(ctx.reshape(v, [self.size] + list(v.shape[-2:])),
                        dtype)

    def out(self, v, dtype, shape):
        """A [size, ...] result as the node's result of (dtype, shape)."""
        return self.ctx.reshape(self.ctx.cast(v, dtype), shape)


def _empty_like_outputs(ctx, node):
    """Zeros of every result's type (for empty inputs)."""
    v = ops._val(node)
    if isinstance(v, torch.Tensor):
        dtype, shape = out_type(node)
        return ctx.zeros(dtype, shape)
    return tuple(ctx.zeros(*out_type(node, k)) if isinstance(t, torch.Tensor)
                 else None for k, t in enumerate(v))


def _info_out(ctx, info, shape):
    return ctx.reshape(ctx.cast(info, "int32"), shape)


# ---------------------------------------------------------------------------
# LU with partial pivoting
# ---------------------------------------------------------------------------

def _pivot_step(ctx, a, k):
    """Step k of partial pivoting on a ([B, m, N]): the pivot row p ([B]
    int64) the first of largest magnitude in column k at or below row k
    (getrf's choice); a with rows k and p swapped; that column after the
    swap ([B, m, 1]), the pivot row and the pivot ([B, 1, 1]), all read
    by masked sums (see _pick)."""
    b, m, _ = a.shape
    column = _pick(ctx, a, 2, k)
    if k + 1 == m:  # the last row is its own pivot
        row = _pick(ctx, a, 1, k)
        return (ctx.broadcast(ctx.scalar(k, "int64"), [b]), a, column, row,
                _pick(ctx, column, 1, k))
    i, _ = _rows(m)
    size = ctx.select(_mask(ctx, i >= k), ctx.unary("abs", column),
                      _s(ctx, -1))
    p = ctx.reshape(ctx.op("tcc.argmax", [size], axis=1), [b])
    at = ctx.reshape(p, [b, 1, 1])
    row_p = _pick_at(ctx, a, at)
    pivot = _pick_at(ctx, column, at)
    a = _swapped(ctx, a, k, at, _pick(ctx, a, 1, k), row_p)
    column = _swapped(ctx, column, k, at, _pick(ctx, column, 1, k), pivot)
    return p, a, column, row_p, pivot


def _lu(ctx, a):
    """LAPACK getrf's factorization of a ([B, m, n], work dtype): P a = L U
    by right-looking elimination with partial pivoting (_pivot_step).
    Returns the packed factors (L's multipliers below the diagonal, U on
    and above it), the 0-based pivot rows (one [B] int64 per column: row j
    was swapped with it), and info [B] int64: the first column (1-based)
    whose pivot is zero, else 0. A zero pivot leaves its column unscaled,
    as LAPACK does (the column is zero below it)."""
    b, m, n = a.shape
    i, j = _rows(m, n)
    info = ctx.zeros("int64", [b])
    pivots = []
    zero = _s(ctx, 0)
    for k in range(min(m, n)):
        p, a, column, row, pivot = _pivot_step(ctx, a, k)
        pivots.append(p)
        singular = ctx.compare("eq", pivot, zero)
        info = _first(ctx, info, ctx.reshape(singular, [b]), k + 1)
        mult = ctx.select(singular, column, ctx.binary("div", column, pivot))
        mult = ctx.select(_mask(ctx, i > k), mult, zero)
        urow = ctx.select(_mask(ctx, j > k), row, zero)
        a = ctx.select(_mask(ctx, (i > k) & (j > k)),
                       ctx.binary("sub", a, ctx.binary("mul", mult, urow)),
                       ctx.select(_mask(ctx, (i > k) & (j == k)), mult, a))
    return a, pivots, info


def _gauss_jordan(ctx, a, x):
    """Solves a y = x (a [B, n, n], x [B, n, r]) by Gauss-Jordan elimination
    of [a | x] with getrf's partial pivoting: per column, the pivot row
    divided by the pivot, the column eliminated from every other row; one
    step per column where LU and two substitutions take three. Returns y,
    and the pivots and info as _lu's (a zero pivot gives inf or nan)."""
    b, n, _ = a.shape
    w = ctx.op("tcc.concat", [a, x], axis=2)
    i, _ = _rows(n)
    info = ctx.zeros("int64", [b])
    zero = _s(ctx, 0)
    pivots = []
    for k in range(n):
        p, w, column, row, pivot = _pivot_step(ctx, w, k)
        pivots.append(p)
        info = _first(ctx, info, ctx.reshape(
            ctx.compare("eq", pivot, zero), [b]), k + 1)
        row = ctx.binary("div", row, pivot)
        w = ctx.select(_mask(ctx, i == k), row, ctx.binary(
            "sub", w, ctx.binary("mul", column, row)))
    return _cut(ctx, w, [0, 0, n], [b, n, x.shape[2]]), pivots, info


def _first(ctx, info, failed, order):
    """info where it is set already, else `order` where `failed`."""
    unset = ctx.compare("eq", info, ctx.scalar(0, "int64"))
    return ctx.select(ctx.binary("and", unset, failed),
                      ctx.scalar(order, "int64"), info)


def _permutation(ctx, pivots, b, m):
    """The row order [B, m] int64 that the row swaps `pivots` (0-based
    [B] rows, applied in order) make of 0..m-1: P^T a = a[order]."""
    order = ctx.broadcast(ctx.constant(np.arange(m)[None], "int64"), [b, m])
    for k, p in enumerate(pivots):
        if k + 1 < m:  # the last row can only be its own pivot
            order = _swap_rows(ctx, order, k, p)
    return order


def _inverse_permutation(ctx, order):
    """inv with inv[order[i]] = i, per matrix."""
    b, m = order.shape
    flat = ctx.binary("add", order, ctx.constant(
        (np.arange(b, dtype=np.int64) * m).reshape(b, 1), "int64"))
    positions = ctx.constant(np.tile(np.arange(m, dtype=np.int64), b),
                             "int64")
    inv = ctx.op("tcc.scatter", [ctx.zeros("int64", [b * m]),
                                 ctx.reshape(flat, [b * m]), positions],
                 axis=0, reduction=ops.enum(0))
    return ctx.reshape(inv, [b, m])


def _pivot_list(ctx, pivots):
    """LAPACK's 1-based pivots ([B, k] int32 tensor) as 0-based [B] int64
    rows, one per column."""
    b, k = pivots.shape
    p = ctx.binary("sub", ctx.cast(pivots, "int64"), ctx.scalar(1, "int64"))
    return [ctx.reshape(_pick(ctx, p, 1, c), [b]) for c in range(k)]


def _pivot_tensor(ctx, pivots, b):
    """0-based [B] rows as LAPACK's 1-based [B, k] int32 pivots."""
    if not pivots:
        return ctx.zeros("int32", [b, 0])
    p = ctx.op("tcc.concat", [ctx.reshape(q, [b, 1]) for q in pivots],
               axis=1) if len(pivots) > 1 else ctx.reshape(pivots[0], [b, 1])
    return ctx.cast(ctx.binary("add", p, ctx.scalar(1, "int64")), "int32")


def _lu_solve(ctx, lu, order, x, adjoint):
    """Solves A y = x (A^T y = x with `adjoint`) for the factors lu
    ([B, n, n]) of P A = L U, `order` the rows of P (see _permutation)."""
    if not adjoint:
        y = _take_rows(ctx, x, order)
        y = _solve_triangular(ctx, lu, y, lower=True, unit=True)
        return _solve_triangular(ctx, lu, y, lower=False, unit=False)
    lut = _t(ctx, lu)
    y = _solve_triangular(ctx, lut, x, lower=True, unit=False)
    y = _solve_triangular(ctx, lut, y, lower=False, unit=True)
    return _take_rows(ctx, y, _inverse_permutation(ctx, order))


@converts(aten.linalg_lu_factor_ex.default, check=_lu_check)
def _lu_factor_ex(ctx, node):
    """(LU, pivots, info) of getrf."""
    x = ctx.tensor(named(node)["A"])
    dtype, shape = out_type(node, 0)
    s = _Stack(ctx, x)
    m, n = shape[-2:]
    if s.size == 0 or m == 0 or n == 0:
        return (ctx.zeros(dtype, shape), ctx.zeros(*out_type(node, 1)),
                ctx.zeros(*out_type(node, 2)))
    lu, pivots, info = _lu(ctx, s.flat(x))
    return (s.out(lu, dtype, shape),
            ctx.reshape(_pivot_tensor(ctx, pivots, s.size),
                        out_type(node, 1)[1]),
            _info_out(ctx, info, s.batch))


def _unpacked(ctx, node, s, lu, order):
    """(P, L, U) of packed factors lu [B, m, n] and the row order."""
    b, m, n = lu.shape
    k = min(m, n)
    p_dtype, p_shape = out_type(node, 0)
    l_dtype, l_shape = out_type(node, 1)
    u_dtype, u_shape = out_type(node, 2)
    if 0 in p_shape:
        perm = ctx.zeros(p_dtype, p_shape)
    else:
        # P[r, i] = 1 where order[i] = r: A = P L U.
        hits = ctx.compare("eq", ctx.constant(
            np.arange(m).reshape(1, m, 1), "int64"),
            ctx.reshape(order, [b, 1, m]))
        perm = ctx.reshape(ctx.cast(hits, p_dtype), p_shape)
    if 0 in l_shape:
        lower = ctx.zeros(l_dtype, l_shape)
    else:
        unit = ctx.constant(np.eye(m, k)[None], WORK)
        lower = ctx.binary("add", _triangle(
            ctx, _cut(ctx, lu, [0, 0, 0], [b, m, k]), True, False), unit)
        lower = s.out(lower, l_dtype, l_shape)
    if 0 in u_shape:
        upper = ctx.zeros(u_dtype, u_shape)
    else:
        upper = s.out(_triangle(ctx, _cut(ctx, lu, [0, 0, 0], [b, k, n]),
                                False), u_dtype, u_shape)
    return perm, lower, upper


@converts(aten.linalg_lu.default, check=_lu_check)
def _linalg_lu(ctx, node):
    """(P, L, U) with A = P L U, from getrf's factors."""
    x = ctx.tensor(named(node)["A"])
    s = _Stack(ctx, x)
    m, n = x.shape[-2:]
    if s.size == 0:
        return _empty_like_outputs(ctx, node)
    if m == 0 or n == 0:
        dtype, shape = out_type(node, 0)
        perm = ctx.broadcast(ctx.constant(np.eye(m), dtype), shape)
        return (perm, ctx.zeros(*out_type(node, 1)),
                ctx.zeros(*out_type(node, 2)))
    lu, pivots, _ = _lu(ctx, s.flat(x))
    order = _permutation(ctx, pivots, s.size, m)
    return _unpacked(ctx, node, s, lu, order)


@converts(aten.lu_unpack.default, check=_matrix_check("LU_data"))
def _lu_unpack(ctx, node):
    """(P, L, U) of packed factors and LAPACK pivots; P and L, U are empty
    when not asked for (torch's unpack_pivots, unpack_data)."""
    a = named(node)
    lu = ctx.tensor(a["LU_data"])
    piv = ctx.tensor(a["LU_pivots"])
    m, n = lu.shape[-2:]
    s = _Stack(ctx, lu)
    if s.size == 0 or m == 0 or n == 0:
        outs = list(_empty_like_outputs(ctx, node))
        dtype, shape = out_type(node, 0)
        if 0 not in shape:
            outs[0] = ctx.broadcast(ctx.constant(np.eye(m), dtype), shape)
        return tuple(outs)
    flat = s.flat(lu)
    pivots = ctx.reshape(ctx.broadcast(piv, s.batch + [piv.shape[-1]]),
                         [s.size, piv.shape[-1]])
    order = _permutation(ctx, _pivot_list(ctx, pivots), s.size, m)
    return _unpacked(ctx, node, s, flat, order)


@converts(aten.linalg_lu_solve.default, check=_matrix_check("LU"))
def _linalg_lu_solve(ctx, node):
    """X with A X = B (X A = B without `left`; A^T in place of A with
    `adjoint`), A given by getrf's factors and pivots."""
    a = named(node)
    lu, piv, rhs = (ctx.tensor(a["LU"]), ctx.tensor(a["pivots"]),
                    ctx.tensor(a["B"]))
    dtype, shape = out_type(node)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    left, adjoint = a["left"], a["adjoint"]
    if not left:  # X A = B is A^T X^T = B^T
        rhs = _transpose_last(ctx, rhs)
        adjoint = not adjoint
    s = _Stack(ctx, lu, rhs, ctx.reshape(piv, list(piv.shape) + [1]))
    n = lu.shape[-1]
    flat = s.flat(lu)
    pivots = ctx.reshape(ctx.broadcast(piv, s.batch + [n]), [s.size, n])
    order = _permutation(ctx, _pivot_list(ctx, pivots), s.size, n)
    x = _lu_solve(ctx, flat, order, s.flat(rhs), adjoint)
    x = ctx.reshape(ctx.cast(x, dtype), s.batch + list(rhs.shape[-2:]))
    return _transpose_last(ctx, x) if not left else x


@converts(aten.linalg_inv_ex.default, check=_matrix_check("A"))
def _linalg_inv_ex(ctx, node):
    """(A^-1, info): the identity solved for by Gauss-Jordan elimination. A
    singular matrix gives inf or nan entries and info > 0
    (torch.linalg.inv raises on it in eager; compiled, it cannot)."""
    a = named(node)
    x = ctx.tensor(a["A"])
    dtype, shape = out_type(node, 0)
    s = _Stack(ctx, x)
    n = shape[-1] if shape else 0
    if s.size == 0 or n == 0:
        return ctx.zeros(dtype, shape), ctx.zeros(*out_type(node, 1))
    inv, _, info = _gauss_jordan(ctx, s.flat(x),
                                 _identity(ctx, s.size, n, n))
    return s.out(inv, dtype, shape), _info_out(ctx, info, s.batch)


def _is_vector_rhs(a_shape, b_shape):
    """torch's rule for linalg.solve: B is a vector (batch) when it is 1-D,
    or has A's shape without its last dimension."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and
                                 list(b_shape) == list(a_shape[:-1]))


@converts(aten._linalg_solve_ex.default, check=_matrix_check("A"))
def _linalg_solve_ex(ctx, node):
    """(X, LU, pivots, info) with A X = B (X A = B without `left`), by
    getrf's factors. A singular A gives inf or nan and info > 0
    (torch.linalg.solve raises on it in eager; compiled, it cannot)."""
    a = named(node)
    ma, rhs = ctx.tensor(a["A"]), ctx.tensor(a["B"])
    left = a["left"]
    dtype, shape = out_type(node, 0)
    lu_dtype, lu_shape = out_type(node, 1)
    piv_shape = out_type(node, 2)[1]
    info_shape = out_type(node, 3)[1]
    n = ma.shape[-1]
    if math.prod(lu_shape) == 0:
        return _empty_like_outputs(ctx, node)
    vector = _is_vector_rhs(ma.shape, rhs.shape)
    if vector:
        rhs = ctx.reshape(rhs, list(rhs.shape) + [1])
    elif not left:
        rhs = _transpose_last(ctx, rhs)
    s = _Stack(ctx, ma, rhs)
    coefficients = s.flat(ma)
    if not left:  # X A = B is A^T X^T = B^T
        coefficients = _t(ctx, coefficients)
    if math.prod(shape) == 0:  # no columns to solve for
        x, pivots, info = ctx.zeros(dtype, shape), None, None
    else:
        x, pivots, info = _gauss_jordan(ctx, coefficients, s.flat(rhs))
        x = ctx.reshape(x, s.batch + list(rhs.shape[-2:]))
        if vector:
            x = ctx.reshape(x, shape)
        elif not left:
            x = _transpose_last(ctx, x)
        x = ctx.broadcast(ctx.cast(x, dtype), shape)
    # The factors of A itself (its own batch), as torch returns them for
    # the backward; an inference graph that does not read them drops them.
    sa = _Stack(ctx, ma)
    lu, lu_pivots, lu_info = _lu(ctx, sa.flat(ma))
    if not left or sa.batch != s.batch or pivots is None:
        pivots, info = lu_pivots, lu_info
    piv = ctx.reshape(_pivot_tensor(ctx, pivots, sa.size), sa.batch + [n])
    return (x,
            ctx.broadcast(ctx.reshape(ctx.cast(lu, lu_dtype),
                                      sa.batch + [n, n]), lu_shape),
            ctx.broadcast(piv, piv_shape),
            ctx.broadcast(_info_out(ctx, info, sa.batch), info_shape))


def _lu_outputs(ctx, s, lu, pivots, node, k_lu):
    """The LU and pivots results (result k_lu and the next) of a node."""
    n = lu.shape[-1]
    return (s.out(lu, out_type(node, k_lu)[0], out_type(node, k_lu)[1]),
            ctx.reshape(_pivot_tensor(ctx, pivots, s.size), s.batch + [n]))


def _det_parts(ctx, x):
    """(LU, pivots, the diagonal of U [B, n], the permutation's sign [B])
    of square matrices x [B, n, n]."""
    lu, pivots, _ = _lu(ctx, x)
    swaps = ctx.zeros("int64", [x.shape[0]])
    for k, p in enumerate(pivots):
        moved = ctx.cast(ctx.compare("ne", p, ctx.scalar(k, "int64")),
                         "int64")
        swaps = ctx.binary("add", swaps, moved)
    odd = ctx.compare("eq", ctx.binary("rem", swaps, ctx.scalar(2, "int64")),
                      ctx.scalar(1, "int64"))
    sign = ctx.select(odd, _s(ctx, -1), _s(ctx, 1))
    return lu, pivots, _diagonal(ctx, lu), sign


def _empty_determinant(ctx, node, dtype, shape):
    """The results of det/slogdet of no matrices or of 0x0 ones: a
    determinant (sign) of 1, everything else empty or 0."""
    outs = list(_empty_like_outputs(ctx, node))
    outs[0] = ctx.broadcast(ctx.scalar(1, dtype), shape)
    return tuple(outs)


@converts(aten._linalg_det.default, check=_matrix_check("A"))
def _linalg_det(ctx, node):
    """(det, LU, pivots): the product of U's diagonal, negated for an odd
    number of row swaps. The determinant of a 0x0 matrix is 1."""
    x = ctx.tensor(named(node)["A"])
    dtype, shape = out_type(node, 0)
    s = _Stack(ctx, x)
    n = x.shape[-1]
    if s.size == 0 or n == 0:
        return _empty_determinant(ctx, node, dtype, shape)
    lu, pivots, diag, sign = _det_parts(ctx, s.flat(x))
    det = ctx.binary("mul", ctx.reduce("prod", diag, [1], False), sign)
    return (ctx.reshape(ctx.cast(det, dtype), shape),) + \
        _lu_outputs(ctx, s, lu, pivots, node, 1)


@converts(aten._linalg_slogdet.default, check=_matrix_check("A"))
def _linalg_slogdet(ctx, node):
    """(sign, log|det|, LU, pivots) from U's diagonal: a singular matrix
    has sign 0 and log|det| -inf, as in torch."""
    x = ctx.tensor(named(node)["A"])
    dtype, shape = out_type(node, 0)
    s = _Stack(ctx, x)
    n = x.shape[-1]
    if s.size == 0 or n == 0:
        return _empty_determinant(ctx, node, dtype, shape)
    lu, pivots, diag, sign = _det_parts(ctx, s.flat(x))
    sign = ctx.binary("mul", sign, ctx.reduce(
        "prod", ctx.unary("sign", diag), [1], False))
    logabs = ctx.reduce("sum", ctx.unary("log", ctx.unary("abs", diag)),
                        [1], False)
    return (ctx.reshape(ctx.cast(sign, dtype), shape),
            ctx.reshape(ctx.cast(logabs, dtype), out_type(node, 1)[1])) + \
        _lu_outputs(ctx, s, lu, pivots, node, 2)


# ---------------------------------------------------------------------------
# Cholesky
# ---------------------------------------------------------------------------

def _cholesky(ctx, a):
    """LAPACK potrf's lower factor of a ([B, n, n], work dtype; only its
    lower triangle is read), right-looking: per column, the pivot's square
    root, the column below divided by it, the trailing block less the
    column's outer product. info [B] int64: the order of the first leading
    minor that is not positive definite (a pivot that is not > 0, or nan),
    else 0; from that column on the factor is nan."""
    b, n, _ = a.shape
    i, j = _rows(n, n)
    info = ctx.zeros("int64", [b])
    zero = _s(ctx, 0)
    for k in range(n):
        column = _pick(ctx, a, 2, k)
        pivot = _pick(ctx, column, 1, k)
        bad = ctx.unary("not", ctx.compare("gt", pivot, zero))
        info = _first(ctx, info, ctx.reshape(bad, [b]), k + 1)
        root = ctx.unary("sqrt", pivot)
        column = ctx.select(_mask(ctx, i > k),
                            ctx.binary("div", column, root), zero)
        a = ctx.select(
            _mask(ctx, (i > k) & (j > k)),
            ctx.binary("sub", a, ctx.binary("mul", column, _t(ctx, column))),
            ctx.select(_mask(ctx, (i > k) & (j == k)), column,
                       ctx.select(_mask(ctx, (i == k) & (j == k)), root, a)))
    return _triangle(ctx, a, True), info


@converts(aten.linalg_cholesky_ex.default, check=_matrix_check("self"))
def _linalg_cholesky_ex(ctx, node):
    """(L, info) with A = L L^T (U with A = U^T U for `upper`, from A's
    upper triangle). A matrix that is not positive definite gives info > 0
    and nan in the factor from the failing column on (torch.linalg.cholesky
    raises on it in eager; compiled, it cannot)."""
    a = named(node)
    x = ctx.tensor(a["self"])
    dtype, shape = out_type(node, 0)
    s = _Stack(ctx, x)
    if s.size == 0 or x.shape[-1] == 0:
        return ctx.zeros(dtype, shape), ctx.zeros(*out_type(node, 1))
    flat = s.flat(x)
    upper = a["upper"]
    factor, info = _cholesky(ctx, _t(ctx, flat) if upper else flat)
    if upper:
        factor = _t(ctx, factor)
    return s.out(factor, dtype, shape), _info_out(ctx, info, s.batch)


def _transpose_last(ctx, v):
    r = len(v.shape)
    return ctx.transpose(v, list(range(r - 2)) + [r - 1, r - 2])


@converts(aten.cholesky_solve.default, check=_matrix_check("input2"))
def _cholesky_solve(ctx, node):
    """X with A X = B, A = L L^T (U^T U with `upper`) given its factor:
    two triangular solves."""
    a = named(node)
    rhs, factor = ctx.tensor(a["self"]), ctx.tensor(a["input2"])
    dtype, shape = out_type(node)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    s = _Stack(ctx, rhs, factor)
    f = s.flat(factor)
    x = s.flat(rhs)
    lower = _t(ctx, f) if a["upper"] else f
    y = _solve_triangular(ctx, lower, x, lower=True, unit=False)
    x = _solve_triangular(ctx, _t(ctx, lower), y, lower=False, unit=False)
    return s.out(x, dtype, shape)


@converts(aten.cholesky_inverse.default, check=_matrix_check("self"))
def _cholesky_inverse(ctx, node):
    """(L L^T)^-1 (or (U^T U)^-1 with `upper`) of a Cholesky factor:
    L^-1 by substitution, then L^-T L^-1."""
    a = named(node)
    factor = ctx.tensor(a["self"])
    dtype, shape = out_type(node)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    s = _Stack(ctx, factor)
    f = s.flat(factor)
    lower = _t(ctx, f) if a["upper"] else f
    n = shape[-1]
    inv = _solve_triangular(ctx, lower, _identity(ctx, s.size, n, n),
                            lower=True, unit=False)
    return s.out(ctx.op("tcc.matmul", [_t(ctx, inv), inv]), dtype, shape)


# ---------------------------------------------------------------------------
# Triangular solves
# ---------------------------------------------------------------------------

@converts(aten.triangular_solve.default, check=_matrix_check("A"))
def _triangular_solve(ctx, node):
    """(X, A) with op(A) X = B, op the transpose with `transpose`; A's
    other triangle is not read. The second result is A broadcast to the
    batch (torch's copy of it)."""
    a = named(node)
    rhs, t = ctx.tensor(a["self"]), ctx.tensor(a["A"])
    dtype, shape = out_type(node, 0)
    c_dtype, c_shape = out_type(node, 1)
    copy = ctx.broadcast(ctx.cast(t, c_dtype), c_shape)
    if 0 in shape:
        return ctx.zeros(dtype, shape), copy
    s = _Stack(ctx, rhs, t)
    f = s.flat(t)
    lower = not a["upper"]
    if a["transpose"]:
        f, lower = _t(ctx, f), not lower
    x = _solve_triangular(ctx, f, s.flat(rhs), lower, a["unitriangular"])
    return s.out(x, dtype, shape), copy


@converts(aten.linalg_solve_triangular.default, check=_matrix_check("self"))
def _linalg_solve_triangular(ctx, node):
    """X with A X = B (X A = B without `left`: A^T X^T = B^T); A's other
    triangle (and its diagonal with `unitriangular`) is not read."""
    a = named(node)
    t, rhs = ctx.tensor(a["self"]), ctx.tensor(a["B"])
    dtype, shape = out_type(node)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    lower = not a["upper"]
    left = a["left"]
    if not left:
        rhs = _transpose_last(ctx, rhs)
    s = _Stack(ctx, rhs, t)
    f = s.flat(t)
    if not left:
        f, lower = _t(ctx, f), not lower
    x = _solve_triangular(ctx, f, s.flat(rhs), lower, a["unitriangular"])
    if not left:
        x = _t(ctx, x)
    return s.out(x, dtype, shape)


# ---------------------------------------------------------------------------
# Householder QR
# ---------------------------------------------------------------------------

def _reflector(ctx, a, k):
    """The Householder vector [B, m, 1] stored in column k of a: 0 above
    row k, 1 at it, a's column below it (LAPACK's packed form)."""
    b, m, _ = a.shape
    i, _ = _rows(m)
    one = np.zeros([1, m, 1], dtype=bool)
    one[0, k] = True
    return ctx.select(_mask(ctx, i > k), _pick(ctx, a, 2, k),
                      ctx.select(_mask(ctx, one), _s(ctx, 1), _s(ctx, 0)))


def _reflect(ctx, c, v, tau, left=True):
    """H c (c H without `left`) for H = I - tau v v^T; v [B, m, 1], tau
    [B, 1, 1]."""
    if left:
        w = ctx.reduce("sum", ctx.binary("mul", v, c), [1], True)  # v^T c
        return ctx.binary("sub", c, ctx.binary(
            "mul", ctx.binary("mul", tau, v), w))
    w = ctx.op("tcc.matmul", [c, v])  # c v: [B, r, 1]
    return ctx.binary("sub", c, ctx.binary(
        "mul", ctx.binary("mul", tau, w), _t(ctx, v)))


def _geqrf(ctx, a):
    """LAPACK geqrf of a ([B, m, n], work dtype): per column k, the
    reflector H = I - tau v v^T (v[k] = 1) that maps the column's entries
    from row k down to (beta, 0, ...), beta = -sign(alpha) * norm with
    alpha the diagonal entry (larfg's convention: a column already zero
    below the diagonal has tau = 0 and keeps alpha), applied to the columns
    after it. Returns the packed result (R on and above the diagonal, the
    vectors below), the taus, one [B, 1, 1] per column, and the vectors,
    one [B, m, 1] per column."""
    b, m, n = a.shape
    i, j = _rows(m, n)
    zero = _s(ctx, 0)
    taus, vectors = [], []
    for k in range(min(m, n)):
        column = _pick(ctx, a, 2, k)
        below = ctx.select(_mask(ctx, i > k), column, zero)
        rest = ctx.reduce("sum", ctx.binary("mul", below, below), [1], True)
        alpha = _pick(ctx, column, 1, k)
        norm = ctx.unary("sqrt", ctx.binary(
            "add", ctx.binary("mul", alpha, alpha), rest))
        beta = ctx.select(ctx.compare("ge", alpha, zero),
                          ctx.unary("neg", norm), norm)
        trivial = ctx.compare("eq", rest, zero)
        safe_beta = ctx.select(trivial, _s(ctx, 1), beta)
        tau = ctx.select(trivial, zero, ctx.binary(
            "div", ctx.binary("sub", beta, alpha), safe_beta))
        scale = ctx.select(trivial, _s(ctx, 1), ctx.unary(
            "reciprocal", ctx.binary("sub", alpha, beta)))
        one = np.zeros([1, m, 1], dtype=bool)
        one[0, k] = True
        v = ctx.select(_mask(ctx, i > k), ctx.binary("mul", column, scale),
                       ctx.select(_mask(ctx, one), _s(ctx, 1), zero))
        a = ctx.select(_mask(ctx, j > k), _reflect(ctx, a, v, tau), a)
        diag = ctx.select(trivial, alpha, beta)
        a = ctx.select(_mask(ctx, (i > k) & (j == k)), v,
                       ctx.select(_mask(ctx, (i == k) & (j == k)), diag, a))
        taus.append(tau)
        vectors.append(v)
    return a, taus, vectors


def _householder_q(ctx, vectors, taus, b, m, cols):
    """The first `cols` columns of Q = H_0 H_1 ... H_{k-1} (orgqr), from
    the reflectors' vectors ([B, m, 1] each) and taus: each applied to the
    identity's columns, the last first."""
    q = _identity(ctx, b, m, cols)
    for k in reversed(range(len(taus))):
        q = _reflect(ctx, q, vectors[k], taus[k])
    return q


def _tau_list(ctx, tau, b):
    """A [B, k] tau tensor as one [B, 1, 1] per reflector."""
    k = tau.shape[-1]
    return [ctx.reshape(_pick(ctx, tau, 1, c), [b, 1, 1])
            for c in range(k)]


@converts(aten.geqrf.default, check=_matrix_check("self"))
def _geqrf_op(ctx, node):
    """(the packed reflectors and R, tau) of LAPACK geqrf."""
    x = ctx.tensor(named(node)["self"])
    dtype, shape = out_type(node, 0)
    s = _Stack(ctx, x)
    if 0 in shape:
        return _empty_like_outputs(ctx, node)
    packed, taus, _ = _geqrf(ctx, s.flat(x))
    tau = ctx.op("tcc.concat", [ctx.reshape(t, [s.size, 1]) for t in taus],
                 axis=1) if len(taus) > 1 else \
        ctx.reshape(taus[0], [s.size, 1])
    return s.out(packed, dtype, shape), \
        ctx.reshape(ctx.cast(tau, dtype), out_type(node, 1)[1])


@converts(aten.linalg_qr.default, check=_qr_check)
def _linalg_qr(ctx, node):
    """(Q, R) of Householder QR with geqrf's signs: R's diagonal entries
    are -sign of the column's leading entry, as LAPACK's. mode "reduced":
    Q [m, k], R [k, n]; "complete": Q [m, m], R [m, n]; "r": R only."""
    a = named(node)
    x = ctx.tensor(a["A"])
    mode = a["mode"]
    q_dtype, q_shape = out_type(node, 0)
    r_dtype, r_shape = out_type(node, 1)
    s = _Stack(ctx, x)
    m, n = x.shape[-2:]
    if s.size == 0 or m == 0 or n == 0:
        q = ctx.zeros(q_dtype, q_shape)
        if mode == "complete" and 0 not in q_shape:
            q = ctx.broadcast(ctx.constant(np.eye(m), q_dtype), q_shape)
        return q, ctx.zeros(r_dtype, r_shape)
    packed, taus, vectors = _geqrf(ctx, s.flat(x))
    rows = r_shape[-2]
    r = _triangle(ctx, packed, False)
    if rows < m:
        r = _cut(ctx, r, [0, 0, 0], [s.size, rows, n])
    r = s.out(r, r_dtype, r_shape)
    if mode == "r":
        return ctx.zeros(q_dtype, q_shape), r
    q = _householder_q(ctx, vectors, taus, s.size, m, q_shape[-1])
    return s.out(q, q_dtype, q_shape), r


@converts(aten.linalg_householder_product.default,
          check=_matrix_check("input"))
def _householder_product(ctx, node):
    """orgqr: the first n columns of H_0 ... H_{k-1}, the reflectors in the
    columns of A (below their diagonal) with tau."""
    a = named(node)
    x, tau = ctx.tensor(a["input"]), ctx.tensor(a["tau"])
    dtype, shape = out_type(node)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    s = _Stack(ctx, x)
    flat = s.flat(x)
    k = tau.shape[-1]
    taus = _tau_list(ctx, ctx.cast(ctx.reshape(ctx.broadcast(
        tau, s.batch + [k]), [s.size, k]), WORK), s.size)
    vectors = [_reflector(ctx, flat, c) for c in range(k)]
    return s.out(_householder_q(ctx, vectors, taus, s.size, x.shape[-2],
                                shape[-1]), dtype, shape)


@converts(aten.ormqr.default, check=_matrix_check("self"))
def _ormqr(ctx, node):
    """op(Q) C (C op(Q) without `left`), op the transpose with
    `transpose`, Q = H_0 ... H_{k-1} the product of geqrf's reflectors:
    the reflectors applied to C one by one, in the order the product
    takes."""
    a = named(node)
    x, tau, c = (ctx.tensor(a["self"]), ctx.tensor(a["input2"]),
                 ctx.tensor(a["input3"]))
    dtype, shape = out_type(node)
    if 0 in shape:
        return ctx.zeros(dtype, shape)
    left, transpose = a["left"], a["transpose"]
    s = _Stack(ctx, x, c)
    flat = s.flat(x)
    out = s.flat(c)
    k = tau.shape[-1]
    taus = _tau_list(ctx, ctx.cast(ctx.reshape(ctx.broadcast(
        tau, s.batch + [k]), [s.size, k]), WORK), s.size)
    # Q C = H_0 (... (H_{k-1} C)): the last first; Q^T C the first first;
    # C Q = ((C H_0) ...) H_{k-1}: the first first; C Q^T the last first.
    order = range(k) if left == transpose else reversed(range(k))
    for r in order:
        out = _reflect(ctx, out, _reflector(ctx, flat, r), taus[r], left)
    return s.out(out, dtype, shape)


# ---------------------------------------------------------------------------
# torch's error checks of linalg results
# ---------------------------------------------------------------------------

_with_effects = torch.ops.higher_order.with_effects


def _effects_check(node):
    if len(node.args) < 2 or node.args[1] is not aten._linalg_check_errors \
            .default:
        return f"the effectful op {node.args[1] if len(node.args) > 1 else ''}"
    return None


def _check_errors(ctx, node):
    """torch.linalg's check of an info tensor (raising on a singular or
    indefinite matrix), threaded through an effect token: compiled code
    cannot raise, so the check is dropped and the token passed on. The
    results are what the arithmetic gives (see the converters above)."""
    dtype, shape = out_type(node, 0)
    return (ctx.zeros(dtype, shape),) + (None,) * (len(ops._val(node)) - 1)


ops.TABLE[_with_effects] = _check_errors
ops._CHECKS[_with_effects] = _effects_check
