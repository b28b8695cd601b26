"""torch.special's orthogonal polynomials of a tensor degree (Chebyshev of
the four kinds and their shifted forms, Hermite, Laguerre, Legendre).

Each is its three-term recurrence in one tcc.loop that runs to the largest
degree present, every element keeping the term of its own degree, in the
tensor's own type and in torch's order of operations; then torch's special
values (negative degree, the interval's ends) and, for high degrees inside
(-1, 1), its closed trigonometric forms. Registered into the one table of
ops.py.
"""

from .ops import FLOATS, Unsupported, aten, converts, out_type, named


def _degree(ctx, n, dtype):
    """n truncated toward zero (torch converts the degree to an integer),
    a NaN degree counting as negative."""
    n = ctx.value(n, dtype)
    if dtype not in FLOATS:
        return n
    neg = ctx.compare("lt", n, ctx.scalar(0, dtype))
    t = ctx.select(neg, ctx.unary("ceil", n), ctx.unary("floor", n))
    return ctx.select(ctx.compare("ne", n, n), ctx.scalar(-1, dtype), t)


def _recurrence(ctx, x, n, p0, p1, step):
    """P_n(x) for n >= 1, from P_0 = p0, P_1 = p1 and
    step(k, p, q) = P_{k+1} (p = P_{k-1}, q = P_k, k a 0-d tensor of x's
    type)."""
    dtype = x.dtype
    shape = _broadcast_shape(x.shape, n.shape)
    p = ctx.broadcast(p0, shape)
    q = ctx.broadcast(p1, shape)
    if not shape or 0 not in shape:
        top = ctx.reduce("max", n, list(range(len(n.shape))), False)
        trip = ctx.binary("max", ctx.binary(
            "sub", ctx.cast(top, "int64"), ctx.scalar(1, "int64")),
            ctx.scalar(0, "int64"))
    else:
        trip = ctx.scalar(0, "int64")

    def body(i, _cond, p, q):
        k = ctx.cast(ctx.binary("add", i, ctx.scalar(1, "int64")), dtype)
        active = ctx.compare("gt", n, k)  # degree k + 1 is wanted
        r = step(k, p, q)
        return [ctx.scalar(True, "bool"), ctx.select(active, q, p),
                ctx.select(active, r, q)]

    _, q = ctx.g.loop(trip, ctx.scalar(True, "bool"), [p, q], body)
    return q


def _broadcast_shape(a, b):
    rank = max(len(a), len(b))
    a = [1] * (rank - len(a)) + list(a)
    b = [1] * (rank - len(b)) + list(b)
    return [max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b)]


def _operands(ctx, node):
    dtype, shape = out_type(node)
    if dtype not in FLOATS:
        raise Unsupported(f"an orthogonal polynomial of {dtype}")
    a = named(node)
    x = ctx.broadcast(ctx.value(a["x"], dtype), shape)
    n = ctx.broadcast(_degree(ctx, a["n"], dtype), shape)
    return dtype, x, n


def _c(ctx, v, dtype):
    return ctx.scalar(v, dtype)


def _even(ctx, n, dtype):
    half = ctx.binary("mul", n, _c(ctx, 0.5, dtype))
    return ctx.compare("eq", ctx.unary("floor", half), half)


def _chebyshev(kind, shifted):
    """T, U, V, W (and the shifted T*, U*, V*, W* of x' = 2x - 1)."""
    # The degree above which torch takes the closed form inside (-1, 1).
    closed = {(False, "t"): 6, (False, "u"): 8, (False, "v"): 8,
              (False, "w"): 8, (True, "t"): 6, (True, "u"): 6,
              (True, "v"): 6, (True, "w"): 4}[(shifted, kind)]

    def convert(ctx, node):
        dtype, x, n = _operands(ctx, node)
        c = lambda v: _c(ctx, v, dtype)  # noqa: E731
        b = ctx.binary
        y = b("sub", b("add", x, x), c(1.0)) if shifted else x
        one = c(1.0)
        p1 = b("add", y, y) if kind != "t" else y
        if kind == "v":
            p1 = b("sub", p1, one)
        elif kind == "w":
            p1 = b("add", p1, one)
        r = _recurrence(ctx, y, n, one, p1,
                        lambda k, p, q: b("sub", b("mul", b("add", y, y), q), p))
        even = _even(ctx, n, dtype)
        two_n1 = b("add", b("add", n, n), one)
        n1 = b("add", n, one)
        neg = lambda v: ctx.unary("neg", v)  # noqa: E731
        sel = ctx.select
        # The ends of the interval: y = 1 and y = -1.
        if kind == "t":
            at_hi, at_lo = one, sel(even, one, neg(one))
        elif kind == "u":
            at_hi, at_lo = n1, sel(even, n1, neg(n1))
        elif kind == "v":
            at_hi, at_lo = one, sel(even, two_n1, neg(two_n1))
        else:
            at_hi, at_lo = two_n1, sel(even, one, neg(one))
        if shifted:
            hi = ctx.compare("eq", x, one)
            lo = ctx.compare("eq", x, c(0.0))
        else:
            hi = ctx.compare("eq", x, one)
            lo = ctx.compare("eq", x, c(-1.0))
        # Closed forms for high degrees inside the interval.
        a = ctx.unary("acos", y)
        if kind == "t":
            form = ctx.unary("cos", b("mul", n, a))
        elif kind == "u":
            s = ctx.unary("sin", a)
            form = sel(ctx.compare("ne", s, c(0.0)),
                       b("div", ctx.unary("sin", b("mul", n1, a)), s),
                       b("div", b("mul", n1, ctx.unary("cos", b("mul", n1, a))),
                         y))
        elif kind == "v":
            h = ctx.unary("cos", b("div", a, c(2.0)))
            form = sel(ctx.compare("ne", ctx.unary("sin", b("div", a, c(2.0))),
                                   one),
                       b("div", ctx.unary("cos", b("mul", b("add", n, c(0.5)),
                                                   a)), h),
                       sel(even, two_n1, neg(two_n1)))
        else:
            h = ctx.unary("sin", b("div", a, c(2.0)))
            at_one = two_n1 if not shifted else sel(even, one, neg(one))
            if not shifted:
                at_one = sel(ctx.compare("gt", x, c(0.0)), two_n1,
                             sel(even, one, neg(one)))
            form = sel(ctx.compare("ne", ctx.unary("cos", b("div", a, c(2.0))),
                                   one),
                       b("div", ctx.unary("sin", b("mul", b("add", n, c(0.5)),
                                                   a)), h),
                       at_one)
        inside = ctx.binary("and", ctx.compare("gt", n, c(float(closed))),
                            ctx.compare("lt", ctx.unary("abs", y), one))
        out = sel(inside, form, r)
        out = sel(ctx.compare("eq", n, one), p1, out)
        out = sel(ctx.compare("eq", n, c(0.0)), one, out)
        out = sel(hi, at_hi, sel(lo, at_lo, out))
        return sel(ctx.compare("lt", n, c(0.0)), c(0.0), out)

    return convert


for _kind in "tuvw":
    converts(getattr(aten, f"special_chebyshev_polynomial_{_kind}"))(
        _chebyshev(_kind, False))
    converts(getattr(aten, f"special_shifted_chebyshev_polynomial_{_kind}"))(
        _chebyshev(_kind, True))


def _simple(name, p1, step, ends=None):
    """A family with P_0 = 1, P_1 = p1(x) and P_{k+1} = step(k, x, p, q)."""

    def convert(ctx, node):
        dtype, x, n = _operands(ctx, node)
        c = lambda v: _c(ctx, v, dtype)  # noqa: E731
        one = c(1.0)
        first = p1(ctx, x, c)
        r = _recurrence(ctx, x, n, one, first,
                        lambda k, p, q: step(ctx, k, x, p, q, c))
        out = ctx.select(ctx.compare("eq", n, one), first, r)
        out = ctx.select(ctx.compare("eq", n, c(0.0)), one, out)
        if ends is not None:
            out = ends(ctx, x, n, out, c)
        return ctx.select(ctx.compare("lt", n, c(0.0)), c(0.0), out)

    converts(getattr(aten, name))(convert)


def _b(ctx, op, a, b):
    return ctx.binary(op, a, b)


# Physicists' Hermite: H_{k+1} = 2x H_k - 2k H_{k-1}.
_simple("special_hermite_polynomial_h",
        lambda ctx, x, c: _b(ctx, "add", x, x),
        lambda ctx, k, x, p, q, c: _b(ctx, "sub", _b(
            ctx, "mul", _b(ctx, "add", x, x), q),
            _b(ctx, "mul", _b(ctx, "add", k, k), p)))
# Probabilists' Hermite: He_{k+1} = x He_k - k He_{k-1}.
_simple("special_hermite_polynomial_he",
        lambda ctx, x, c: x,
        lambda ctx, k, x, p, q, c: _b(ctx, "sub", _b(ctx, "mul", x, q),
                                      _b(ctx, "mul", k, p)))


def _laguerre_ends(ctx, x, n, out, c):
    return ctx.select(ctx.compare("eq", ctx.unary("abs", x), c(0.0)), c(1.0),
                      out)


# Laguerre: L_{k+1} = ((2k + 1 - x) L_k - k L_{k-1}) / (k + 1).
_simple("special_laguerre_polynomial_l",
        lambda ctx, x, c: _b(ctx, "sub", c(1.0), x),
        lambda ctx, k, x, p, q, c: _b(ctx, "div", _b(ctx, "sub", _b(
            ctx, "mul", _b(ctx, "add", _b(ctx, "add", k, k),
                           _b(ctx, "sub", c(1.0), x)), q),
            _b(ctx, "mul", k, p)), _b(ctx, "add", k, c(1.0))),
        _laguerre_ends)


def _legendre_ends(ctx, x, n, out, c):
    half = ctx.binary("mul", n, c(0.5))
    even = ctx.compare("eq", ctx.unary("floor", half), half)
    sign = ctx.select(ctx.binary("or", ctx.compare("gt", x, c(0.0)), even),
                      c(1.0), c(-1.0))
    at_end = ctx.compare("eq", ctx.unary("abs", x), c(1.0))
    return ctx.select(at_end, sign, out)


# Legendre: P_{k+1} = ((2k + 1) x P_k - k P_{k-1}) / (k + 1).
_simple("special_legendre_polynomial_p",
        lambda ctx, x, c: x,
        lambda ctx, k, x, p, q, c: _b(ctx, "div", _b(ctx, "sub", _b(
            ctx, "mul", _b(ctx, "mul", _b(ctx, "add", _b(ctx, "add", k, k),
                                          c(1.0)), x), q),
            _b(ctx, "mul", k, p)), _b(ctx, "add", k, c(1.0))),
        _legendre_ends)
