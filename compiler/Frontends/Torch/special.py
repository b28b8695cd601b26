"""ATen's special functions (gamma family, Bessel functions, error
function relatives, ...) as compositions of tcc's elementwise ops, which the
fusion pass turns into one kernel. Registered into the one table of ops.py.

Each function is built from its mathematics: power series, recurrences
that shift the argument into an asymptotic expansion's range, reflection
formulas, continued fractions, with the number of terms fixed here so that
the whole real line is covered; the regimes become `select`s between
branches that are all computed. Everything runs in float64 (a float32
input converts exactly) and rounds once to the result's type. Series
coefficients (Bernoulli numbers, factorials, harmonic numbers, the
coefficients of the asymptotic expansions) are derived here, exactly with
Python's fractions where a recurrence would lose precision.

Where torch's own value depends on how it rounds in the input's precision
(the phase of an oscillating asymptotic form at a large argument, the
reflection of trigamma near its poles), that step is taken the same way, so
that the results agree with eager there too; special values (poles, domain
errors, infinities) are torch's.
"""

import math
from fractions import Fraction

from .ops import FLOATS, Unsupported, aten, converts, named, out_type

_INF = float("inf")
_NAN = float("nan")
_EULER = 0.57721566490153286060651209008240243  # Euler's constant gamma


# -- exact coefficients ------------------------------------------------------

def _bernoulli(n):
    """B_0 .. B_n as fractions (B_1 = -1/2), from
    sum_{k=0}^{m} C(m + 1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) /
                 (m + 1))
    return b


_B = _bernoulli(40)


def _cot_derivative(n):
    """Coefficients (constant first) of the polynomial P_n with
    d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)): P_0(c) = c and
    P_{k+1}(c) = -(1 + c^2) P_k'(c)."""
    p = [0, 1]
    for _ in range(n):
        d = [k * p[k] for k in range(1, len(p))] or [0]
        q = [0] * (len(d) + 2)
        for k, v in enumerate(d):
            q[k] -= v
            q[k + 2] -= v
        p = q
    return p


# -- float64 arithmetic on tcc values ----------------------------------------

class _Math:
    """Makes the constants of one converter's graph (each value once)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._consts = {}

    def const(self, value, dtype="float64"):
        key = (dtype, repr(value))
        if key not in self._consts:
            self._consts[key] = self.ctx.scalar(value, dtype)
        return self._consts[key]

    def input(self, arg, dtype="float64", shape=None):
        """An argument in `dtype`; with `shape`, broadcast to it (the
        operands of a binary function, so that every op of the formula
        reads same-shaped operands)."""
        v = self.ctx.value(arg, dtype)
        return _X(self, v if shape is None else self.ctx.broadcast(v, shape))


class _X:
    """A tcc value with Python's operators, so that the formulas below read
    as mathematics; Python numbers mix in as constants of its type."""

    __slots__ = ("m", "v")

    def __init__(self, m, v):
        self.m, self.v = m, v

    @property
    def dtype(self):
        return self.v.dtype

    def _other(self, o):
        return o.v if isinstance(o, _X) else self.m.const(o, self.v.dtype)

    def _binary(self, name, o, swap=False):
        a, b = self.v, self._other(o)
        return _X(self.m, self.m.ctx.binary(name, *((b, a) if swap else
                                                    (a, b))))

    def _compare(self, predicate, o):
        return _X(self.m, self.m.ctx.compare(predicate, self.v,
                                             self._other(o)))

    def __add__(self, o):
        return self._binary("add", o)

    def __radd__(self, o):
        return self._binary("add", o, True)

    def __sub__(self, o):
        return self._binary("sub", o)

    def __rsub__(self, o):
        return self._binary("sub", o, True)

    def __mul__(self, o):
        return self._binary("mul", o)

    def __rmul__(self, o):
        return self._binary("mul", o, True)

    def __truediv__(self, o):
        return self._binary("div", o)

    def __rtruediv__(self, o):
        return self._binary("div", o, True)

    def __neg__(self):
        return _X(self.m, self.m.ctx.unary("neg", self.v))

    def __lt__(self, o):
        return self._compare("lt", o)

    def __le__(self, o):
        return self._compare("le", o)

    def __gt__(self, o):
        return self._compare("gt", o)

    def __ge__(self, o):
        return self._compare("ge", o)

    def __eq__(self, o):
        return self._compare("eq", o)

    def __ne__(self, o):
        return self._compare("ne", o)

    __hash__ = None

    def __and__(self, o):
        return self._binary("and", o)

    def __or__(self, o):
        return self._binary("or", o)

    def __invert__(self):
        return _X(self.m, self.m.ctx.unary("not", self.v))


def _unary(name):
    def apply(x):
        return _X(x.m, x.m.ctx.unary(name, x.v))
    return apply


_exp, _log, _sqrt, _abs = (_unary(n) for n in ("exp", "log", "sqrt", "abs"))
_sin, _cos, _tan, _erf = (_unary(n) for n in ("sin", "cos", "tan", "erf"))
_floor, _ceil, _rint = _unary("floor"), _unary("ceil"), _unary("round")


def _where(cond, a, b):
    m = cond.m
    dtype = a.dtype if isinstance(a, _X) else (
        b.dtype if isinstance(b, _X) else "float64")

    def v(o):
        return o.v if isinstance(o, _X) else m.const(o, dtype)
    return _X(m, m.ctx.select(cond.v, v(a), v(b)))


def _cast(x, dtype):
    return _X(x.m, x.m.ctx.cast(x.v, dtype))


def _isnan(x):
    return x != x


def _is_int(x):
    """Whether x is an integer (the infinities count, as for C's floor)."""
    return _floor(x) == x


def _poly(x, coeffs):
    """sum_k coeffs[k] x^k by Horner's rule (coefficients constant first)."""
    coeffs = [float(c) for c in coeffs]
    r = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        r = r * x + c if isinstance(r, _X) else x * r + c
    return r if isinstance(r, _X) else x * 0.0 + r


def _pow(x, y):
    """x^y (libm's pow: correctly rounded or nearly, where exp(y log x)
    would multiply log x's rounding error by y log x)."""
    return x._binary("pow", y)


# -- gamma, digamma, polygamma, Hurwitz zeta ---------------------------------

# Arguments below _SHIFT move up by _SHIFT through the recurrence
# Gamma(x + 1) = x Gamma(x) before the asymptotic (Stirling) series, whose
# terms at z >= _SHIFT fall below float64's precision within _STIRLING.
_SHIFT = 10
_STIRLING = 9
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)


def _lgamma_pos(y):
    """log Gamma(y) for y > 0 (+inf excepted):
    (z - 1/2) log z - z + log(2 pi) / 2 + sum_k B_2k / (2k (2k - 1) z^(2k-1))
    at z = y + _SHIFT (less log(y (y + 1) ... (y + _SHIFT - 1))) or z = y."""
    small = y < _SHIFT
    z = _where(small, y + _SHIFT, y)
    w = 1.0 / (z * z)
    tail = _poly(w, [_B[2 * k] / (2 * k * (2 * k - 1))
                     for k in range(1, _STIRLING + 1)]) / z
    r = (z - 0.5) * _log(z) - z + _HALF_LOG_2PI + tail
    p = y
    for k in range(1, _SHIFT):
        p = p * (y + k)
    return _where(small, r - _log(p), r)


def _cot_pi(x):
    """cot(pi x) from x's distance d to the nearest integer: 1 / tan(pi d)
    near the poles, tan(pi (1/2 - |d|)) (with d's sign) near the zeros."""
    d = x - _rint(x)
    ad = _abs(d)
    near = 1.0 / _tan(math.pi * d)
    far = _tan(math.pi * (0.5 - ad))
    return _where(ad < 0.25, near, _where(d < 0, -far, far))


def _sin_pi_frac(x):
    """|sin(pi x)| from x's distance to the nearest integer (exact), so
    that it is accurate near the zeros."""
    return _sin(math.pi * _abs(x - _rint(x)))


def _lgamma(x):
    """log|Gamma(x)|; for x < 0 by the reflection formula
    Gamma(x) Gamma(1 - x) = pi / sin(pi x). +inf at the poles (the
    non-positive integers) and at +-inf, as torch."""
    neg = x < 0
    y = _where(neg, 1.0 - x, x)
    pos = _lgamma_pos(y)
    r = _where(neg, _LOG_PI - _log(_sin_pi_frac(x)) - pos, pos)
    pole = ((x <= 0) & _is_int(x)) | (_abs(x) == _INF)
    return _where(pole, _INF, r)


def _digamma_pos(y):
    """psi(y) for y > 0: log z - 1/(2z) - sum_k B_2k / (2k z^2k) at
    z = y + _SHIFT (less sum_{k < _SHIFT} 1 / (y + k)) or z = y. At y = 0
    the sum's 1/y gives torch's -inf (+inf at -0)."""
    small = y < _SHIFT
    z = _where(small, y + _SHIFT, y)
    w = 1.0 / (z * z)
    tail = w * _poly(w, [_B[2 * k] / (2 * k) for k in range(1, _STIRLING + 1)])
    r = _log(z) - 0.5 / z - tail
    s = 1.0 / y
    for k in range(1, _SHIFT):
        s = s + 1.0 / (y + k)
    return _where(small, r - s, r)


def _digamma(x):
    """psi(x); for x < 0 by psi(1 - x) - psi(x) = pi cot(pi x), the
    tangent taken, as torch takes it, of pi r with r = x - ceil(x) in
    (-1, 0] (exact; pi r then rounds, which matters only within float64's
    precision of a pole). NaN at the negative integers and -inf, as
    torch."""
    neg = x < 0
    y = _where(neg, 1.0 - x, x)
    pos = _digamma_pos(y)
    r = _where(neg, pos - math.pi / _tan(math.pi * (x - _ceil(x))), pos)
    return _where(neg & _is_int(x), _NAN, r)


# Hurwitz zeta: _ZETA_TERMS terms summed directly, the rest by the
# Euler-Maclaurin formula at a = q + _ZETA_TERMS with _ZETA_EM Bernoulli
# terms.
_ZETA_TERMS = 9
_ZETA_EM = 12
_ZETA_C = [float(_B[2 * j] / math.factorial(2 * j))
           for j in range(1, _ZETA_EM + 1)]


def _zeta_pos(s, q, power):
    """sum_{k >= 0} (q + k)^-s for q > 0 and s > 1, with power(v) = v^-s:
    sum_{k < N} (q + k)^-s + a^(1-s) / (s - 1) + a^-s / 2
    + sum_j B_2j / (2j)! s (s + 1) ... (s + 2j - 2) a^(-s-2j+1), a = q + N."""
    n = _ZETA_TERMS
    a = q + float(n)
    big = power(a)
    tail = big * a / (s - 1.0) + big * 0.5
    t = big * s / a
    tail = tail + _ZETA_C[0] * t
    for j in range(2, _ZETA_EM + 1):
        t = t * ((s + float(2 * j - 3)) / a) * ((s + float(2 * j - 2)) / a)
        tail = tail + _ZETA_C[j - 1] * t
    total = tail
    for k in reversed(range(n)):
        total = total + power(q + float(k))
    return total


def _zeta(s, q):
    """The Hurwitz zeta function zeta(s, q) = sum_{k >= 0} (q + k)^-s with
    torch's domain: inf at s = 1; NaN for s < 1; for q <= 0 inf at the
    integers and NaN unless s is an integer, where with f = q - floor(q)
    zeta(s, q) = zeta(s, f) + (-1)^s (zeta(s, 1 - f) - zeta(s, 1 - q))
    (the finite sum of the terms below 0 as a difference of two sums).
    torch's NaN at q = +inf and its values at s = +inf (inf below q = 1,
    1 at q = 1, NaN above) are kept."""
    def power(v):
        return _pow(v, -s)
    neg = q < 0
    f = q - _floor(q)
    first = _zeta_pos(s, _where(neg, f, q), power)
    odd = s - 2.0 * _floor(0.5 * s)
    rest = _zeta_pos(s, 1.0 - f, power) - _zeta_pos(s, 1.0 - q, power)
    r = _where(neg, first + (1.0 - 2.0 * odd) * rest, first)
    r = _where(q == _INF, _NAN, r)
    r = _where(s == _INF, _where(q == 1.0, 1.0, _where(q < 1.0, _INF, _NAN)),
               r)
    r = _where((q <= 0) & ~_is_int(s), _NAN, r)
    r = _where((q <= 0) & _is_int(q), _INF, r)
    r = _where(s < 1.0, _NAN, r)
    return _where(s == 1.0, _INF, r)


def _polygamma_pos(n, y):
    """psi^(n)(y) = (-1)^(n+1) n! zeta(n + 1, y) for y > 0, n >= 1."""
    def power(v):
        return _pow(v, -float(n + 1))
    z = _zeta_pos(float(n + 1), y, power)
    return z * float((-1) ** (n + 1) * math.factorial(n))


def _polygamma(n, x):
    """psi^(n)(x) for n >= 2; for x < 0 by the n-th derivative of the
    reflection formula:
    psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi^(n+1) P_n(cot(pi x)).
    As torch (n! zeta(n + 1, x)): +-inf at the non-positive integers and
    -inf, NaN at +inf."""
    neg = x < 0
    y = _where(neg, 1.0 - x, x)
    pos = _polygamma_pos(n, y)
    refl = _poly(_cot_pi(x), _cot_derivative(n)) * (math.pi ** (n + 1))
    r = _where(neg, pos * float((-1) ** n) - refl, pos)
    pole = (x <= 0) & _is_int(x)
    r = _where(pole, _INF if n % 2 else -_INF, r)
    return _where(x == _INF, _NAN, r)


def _trigamma(x, native):
    """psi'(x) as torch computes it: for x < 1/2 by the reflection
    psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x) with sin(pi x) taken of
    pi * x rounded to `native` (torch's float32 arithmetic, whose rounding
    dominates near the poles; at the negative integers it gives torch's
    large finite values rather than inf)."""
    refl = x < 0.5
    y = _where(refl, 1.0 - x, x)
    pos = _polygamma_pos(1, y)
    xn = _cast(x, native)
    s = _sin(_cast(xn * math.pi, "float64"))
    if native != "float64":
        s = _cast(_cast(s, native), "float64")
    r = _where(refl, (math.pi * math.pi) / (s * s) - pos, pos)
    return _where(x == _INF, 0.0, r)


# -- error function relatives ------------------------------------------------

# erfc(x) = exp(-x^2) erfcx(x); below _ERFC_SPLIT erfcx is exp(x^2)
# (1 - erf(x)) (erfc(2) ~ 5e-3: the subtraction costs two digits), above it
# the continued fraction of Laplace, contracted to its even part:
#   sqrt(pi) erfcx(x)
#     = 2x / (2x^2 + 1 - 1*2 / (2x^2 + 5 - 3*4 / (2x^2 + 9 - ...))),
# _ERFC_DEPTH levels deep (float64's precision at x = 2, more beyond).
_ERFC_SPLIT = 2.0
_ERFC_DEPTH = 30
_ERFC_LARGE = 1e8  # beyond, erfcx(x) = 1 / (x sqrt(pi)) to float64's precision
_SQRT_PI = math.sqrt(math.pi)


def _erfcx_cf(x):
    """sqrt(pi) erfcx(x) by the continued fraction, for x >= _ERFC_SPLIT."""
    y = 2.0 * x * x
    t = y + float(4 * _ERFC_DEPTH + 1)
    for k in range(_ERFC_DEPTH, 0, -1):
        t = y + float(4 * k - 3) - float((2 * k - 1) * 2 * k) / t
    cf = 2.0 * x / t
    return _where(x > _ERFC_LARGE, 1.0 / x, cf)


def _erfcx(x):
    """exp(x^2) erfc(x): inf at -inf (overflowing below -26.6), 0 at +inf."""
    near = _exp(x * x) * (1.0 - _erf(x))
    far = _erfcx_cf(_where(x < _ERFC_SPLIT, _ERFC_SPLIT, x)) / _SQRT_PI
    return _where(x < _ERFC_SPLIT, near, far)


def _erfc(x):
    """1 - erf(x), with its relative precision for large x."""
    far = _exp(-x * x) * _erfcx_cf(_where(x < _ERFC_SPLIT, _ERFC_SPLIT, x))
    return _where(x < _ERFC_SPLIT, 1.0 - _erf(x), far / _SQRT_PI)


def _log1p(z):
    """log(1 + z) with z's relative precision: log(u) corrected by the
    rounding of u = 1 + z."""
    u = 1.0 + z
    return _where(u == 1.0, z, _log(u) - ((u - 1.0) - z) / u)


def _log_ndtr(x):
    """log Phi(x), Phi the standard normal distribution function:
    log(erfcx(-x/sqrt2) / 2) - x^2/2 below -1 (no underflow), else
    log1p(-erfc(x/sqrt2) / 2)."""
    t = x * (1.0 / math.sqrt(2.0))
    low = _log(_erfcx(-t) * 0.5) - t * t
    return _where(x < -1.0, low, _log1p(-0.5 * _erfc(t)))


# The inverses start from the closed-form estimate of erf's inverse that
# matches erf's behaviour at 0 and at infinity,
#   w^2 = sqrt((2 / (pi a) + L / 2)^2 - L / a) - (2 / (pi a) + L / 2),
# L = log(1 - y^2) and a = 8 (pi - 3) / (3 pi (4 - pi)) (the constant that
# makes the two agree), within 0.4%; two Halley steps, each tripling the
# digits, finish it.
_WINITZKI = 8 * (math.pi - 3) / (3 * math.pi * (4 - math.pi))
_HALLEY_STEPS = 2


def _erfinv_estimate(L):
    """The estimate of |erf^-1(y)| from L = log(1 - y^2)."""
    b = 2.0 / (math.pi * _WINITZKI) + 0.5 * L
    return _sqrt(_sqrt(b * b - L * (1.0 / _WINITZKI)) - b)


def _erfinv_central(y):
    """erf^-1(y) for |y| <= 1/2, by Halley's method on erf(w) = y:
    with d = (erf(w) - y) / erf'(w), w -= d / (1 + w d)."""
    w = _erfinv_estimate(_log((1.0 - y) * (1.0 + y)))
    w = _where(y < 0, -w, w)
    for _ in range(_HALLEY_STEPS):
        d = (_erf(w) - y) * (_SQRT_PI / 2.0) * _exp(w * w)
        w = w - d / (1.0 + w * d)
    return w


def _ndtri_tail(p):
    """t > 0 with Phi(-t) = p, for 0 < p <= 1/4, by Halley's method on
    g(t) = log Phi(-t) - log p = log(r / 2) - t^2/2 - log p, where
    r = erfcx(t / sqrt2), g' = -sqrt(2/pi) / r and
    g'' = sqrt(2/pi) (t r - sqrt(2/pi)) / r^2 (all from erfcx: no
    underflow however small p is)."""
    c = math.sqrt(2.0 / math.pi)
    t = math.sqrt(2.0) * _erfinv_estimate(_log(4.0 * p * (1.0 - p)))
    lp = _log(p)
    for _ in range(_HALLEY_STEPS):
        u = t * (1.0 / math.sqrt(2.0))
        r = _erfcx(u)
        g = _log(r * 0.5) - u * u - lp
        d1 = -c / r
        d2 = c * (t * r - c) / (r * r)
        t = t - 2.0 * g * d1 / (2.0 * d1 * d1 - g * d2)
    return t


def _ndtri(p):
    """Phi^-1(p): the tails by _ndtri_tail (of p or of 1 - p, exact),
    the middle by sqrt2 erf^-1(2p - 1); -inf at 0, inf at 1, NaN outside
    [0, 1]."""
    lo = p < 0.25
    hi = p > 0.75
    tail = _ndtri_tail(_where(lo, p, _where(hi, 1.0 - p, 0.25)))
    mid = math.sqrt(2.0) * _erfinv_central(
        _where(lo | hi, 0.0, 2.0 * p - 1.0))
    r = _where(lo, -tail, _where(hi, tail, mid))
    r = _where(p == 0.0, -_INF, _where(p == 1.0, _INF, r))
    return _where((p < 0.0) | (p > 1.0), _NAN, r)


def _erfinv(y):
    """erf^-1(y): |y| <= 1/2 by _erfinv_central, beyond through the
    normal tail, erf^-1(y) = t / sqrt2 with Phi(-t) = (1 - |y|) / 2 (exact);
    +-inf at +-1, NaN outside [-1, 1]."""
    a = _abs(y)
    big = a > 0.5
    tail = _ndtri_tail(_where(big, (1.0 - a) * 0.5, 0.25)) * (
        1.0 / math.sqrt(2.0))
    r = _where(big, _where(y < 0, -tail, tail),
               _erfinv_central(_where(big, 0.0, y)))
    r = _where(a == 1.0, _where(y < 0, -_INF, _INF), r)
    return _where(a > 1.0, _NAN, r)


# -- modified Bessel functions -----------------------------------------------

def _hankel_coeffs(nu, n):
    """a_k(nu) = prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (8j), k < n: the
    coefficients of the large-argument expansions of the Bessel functions
    of order nu."""
    out, p = [], Fraction(1)
    for k in range(n):
        if k:
            p *= Fraction(4 * nu * nu - (2 * k - 1) ** 2, 8 * k)
        out.append(p)
    return out


# I_nu: the power series sum_k (x/2)^(2k+nu) / (k! (k+nu)!) (positive
# terms) up to _I_SPLIT, _I_SERIES terms; beyond it
# I_nu(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k, _I_ASYM terms
# (both below 1e-17 relative at the split).
_I_SPLIT = 20.0
_I_SERIES = 36
_I_ASYM = 26
_LOG_FLT_MAX = math.log(3.4028234663852886e38)


def _bessel_i(nu, x, scaled, native):
    """I_nu(x) (nu = 0 or 1), or e^-|x| I_nu(x) with `scaled`. Unscaled,
    torch forms e^|x| in `native`: in float32 that overflows above
    log(FLT_MAX), and at +-inf gives NaN, as here."""
    a = _abs(x)
    small = a <= _I_SPLIT
    s = _where(small, a, _I_SPLIT)
    ser = _poly(0.25 * s * s, [Fraction(1, math.factorial(k) *
                                        math.factorial(k + nu))
                               for k in range(_I_SERIES)])
    if nu:
        ser = ser * (0.5 * s)
    b = _where(small, _I_SPLIT, a)
    asy = _poly(1.0 / b, [(-1) ** k * c for k, c in
                          enumerate(_hankel_coeffs(nu, _I_ASYM))]) / _sqrt(
        (2.0 * math.pi) * b)
    if scaled:
        r = _where(small, ser * _exp(-a), asy)
    else:
        r = _where(small, ser, _exp(b) * asy)
        if native != "float64":
            r = _where((a > _LOG_FLT_MAX) & (a < _INF), _INF, r)
    return _where(x < 0, -r, r) if nu else r


def _harmonic(n):
    return sum((Fraction(1, j) for j in range(1, n + 1)), Fraction(0))


# K_nu: up to _K_SERIES_MAX the series of K_0 and K_1 about 0,
#   K_0(x) = -(log(x/2) + gamma) I_0(x) + sum_{k>=1} H_k u^k / k!^2,
#   K_1(x) = 1/x + log(x/2) I_1(x)
#            - x/4 sum_{k>=0} (H_k + H_{k+1} - 2 gamma) u^k / (k! (k+1)!),
# u = x^2/4, H_k the harmonic numbers (_K_SERIES terms); up to _I_SPLIT the
# trapezoidal rule (exponentially convergent for this integrand) on
#   e^x K_nu(x) = int_0^inf exp(-2x sinh^2(t/2)) cosh(nu t) dt,
# step _K_STEP, _K_NODES nodes; beyond, the large-argument expansion
# K_nu(x) ~ sqrt(pi / (2x)) e^-x sum_k a_k(nu) / x^k.
_K_SERIES_MAX = 2.0
_K_SERIES = 16
_K_STEP = 0.16
_K_NODES = 24


def _k_quadrature(nu, z):
    """e^z K_nu(z) for 2 <= z <= _I_SPLIT by the trapezoidal rule."""
    quad = 0.5  # the node at t = 0
    for k in reversed(range(1, _K_NODES + 1)):
        t = k * _K_STEP
        quad = math.cosh(nu * t) * _exp(
            z * (-2.0 * math.sinh(0.5 * t) ** 2)) + quad
    return quad * _K_STEP


def _bessel_k(nu, x, scaled):
    """K_nu(x) (nu = 0 or 1), or e^x K_nu(x) with `scaled`: inf at 0, NaN
    below, 0 at +inf."""
    small = x <= _K_SERIES_MAX
    s = _where(small, x, _K_SERIES_MAX)
    u = 0.25 * s * s
    log_half = _log(0.5 * s)
    fact = math.factorial
    if nu == 0:
        i = _poly(u, [Fraction(1, fact(k) ** 2) for k in range(_K_SERIES)])
        ser = _poly(u, [_harmonic(k) / fact(k) ** 2
                        for k in range(_K_SERIES)]) - (log_half + _EULER) * i
    else:
        i = 0.5 * s * _poly(u, [Fraction(1, fact(k) * fact(k + 1))
                                for k in range(_K_SERIES)])
        c = [(float(_harmonic(k) + _harmonic(k + 1)) - 2 * _EULER) /
             (fact(k) * fact(k + 1)) for k in range(_K_SERIES)]
        ser = 1.0 / s + log_half * i - 0.25 * s * _poly(u, c)
    mid = _where(small, _K_SERIES_MAX + 1.0,
                 _where(x <= _I_SPLIT, x, _I_SPLIT))
    quad = _k_quadrature(nu, mid)
    b = _where(x <= _I_SPLIT, _I_SPLIT, x)
    asy = _poly(1.0 / b, _hankel_coeffs(nu, _I_ASYM)) * _sqrt(
        (0.5 * math.pi) / b)
    big = _where(x <= _I_SPLIT, quad, asy)
    r = _where(small, ser * _exp(x), big) if scaled else \
        _where(small, ser, big * _exp(-x))
    r = _where(x == 0.0, _INF, r)
    return _where(x < 0.0, _NAN, r)


# -- Bessel functions of the first and second kind ---------------------------

# Up to _J_SERIES_MAX the series about 0 (terms below 1 there):
#   J_0 = sum_k (-u)^k / k!^2,  J_1 = x/2 sum_k (-u)^k / (k! (k+1)!),
#   Y_0 = 2/pi ((log(x/2) + gamma) J_0 - sum_{k>=1} H_k (-u)^k / k!^2),
#   Y_1 = -2/(pi x) + 2/pi log(x/2) J_1
#         - x/(2 pi) sum_k (H_k + H_{k+1} - 2 gamma) (-u)^k / (k! (k+1)!),
# u = x^2/4. Up to _I_SPLIT, Miller's backward recurrence
# J_{n-1} = 2n/x J_n - J_{n+1} from n = _J_START, normalized by
# J_0 + 2 sum_k J_2k = 1, with Neumann's series (all terms bounded: no
# cancellation)
#   Y_0 = 2/pi ((log(x/2) + gamma) J_0 - 2 sum_{k>=1} (-1)^k J_2k / k),
#   Y_1 = 2/pi ((log(x/2) + gamma) J_1 - J_0 / x
#               + sum_{k>=1} (-1)^k (J_{2k-1} - J_{2k+1}) / k)
# (the second is minus the derivative of the first). Beyond, Hankel's
# expansion with chi = x - (nu/2 + 1/4) pi:
#   J_nu = sqrt(2/(pi x)) (P cos chi - Q sin chi),
#   Y_nu = sqrt(2/(pi x)) (P sin chi + Q cos chi),
#   P = sum_k (-1)^k a_2k / x^2k,  Q = sum_k (-1)^k a_2k+1 / x^(2k+1).
_J_SERIES_MAX = 2.0
_J_SERIES = 16
_J_START = 50


def _bessel_jy_series(x):
    """(J_0, J_1, Y_0, Y_1) for 0 < x <= _J_SERIES_MAX."""
    fact = math.factorial
    u = -0.25 * x * x
    j0 = _poly(u, [Fraction(1, fact(k) ** 2) for k in range(_J_SERIES)])
    j1 = 0.5 * x * _poly(u, [Fraction(1, fact(k) * fact(k + 1))
                              for k in range(_J_SERIES)])
    log_half = _log(0.5 * x)
    y0 = (2.0 / math.pi) * ((log_half + _EULER) * j0 - _poly(
        u, [_harmonic(k) / fact(k) ** 2 for k in range(_J_SERIES)]))
    c = [(float(_harmonic(k) + _harmonic(k + 1)) - 2 * _EULER) /
         (fact(k) * fact(k + 1)) for k in range(_J_SERIES)]
    y1 = (2.0 / math.pi) * (log_half * j1 - 1.0 / x) - (0.5 / math.pi) * x * \
        _poly(u, c)
    return j0, j1, y0, y1


def _bessel_jy_miller(x, want_y):
    """(J_0, J_1, Y_0, Y_1) for _J_SERIES_MAX <= x <= _I_SPLIT (the Y
    only with want_y)."""
    inv = 2.0 / x
    nxt, cur = 0.0, 1e-30 + x * 0.0  # J_{n+1}, J_n at n = _J_START
    f = {_J_START: cur}
    for n in range(_J_START, 0, -1):
        nxt, cur = cur, (inv * float(n)) * cur - nxt
        f[n - 1] = cur
    norm = f[0]
    for k in range(2, _J_START + 1, 2):
        norm = norm + 2.0 * f[k]
    j0, j1 = f[0] / norm, f[1] / norm
    if not want_y:
        return j0, j1, None, None
    s0 = s1 = None
    for k in range(1, _J_START // 2):
        a = f[2 * k] * (2.0 * (-1) ** k / k)
        b = (f[2 * k - 1] - f[2 * k + 1]) * ((-1) ** k / k)
        s0 = a if s0 is None else s0 + a
        s1 = b if s1 is None else s1 + b
    lg = _log(0.5 * x) + _EULER
    y0 = (2.0 / math.pi) * (lg * j0 - s0 / norm)
    y1 = (2.0 / math.pi) * (lg * j1 - j0 / x + s1 / norm)
    return j0, j1, y0, y1


def _hankel_pq(nu, x):
    """Hankel's P and Q for order nu at x >= _I_SPLIT."""
    a = _hankel_coeffs(nu, _I_ASYM)
    w = -1.0 / (x * x)
    p = _poly(w, a[0::2])
    q = _poly(w, a[1::2]) / x
    return p, q


def _bessel_jy(nu, kind, x, native):
    """J_nu(x) (kind "j") or Y_nu(x) (kind "y"), nu = 0 or 1. In the
    asymptotic range the phase x - (nu/2 + 1/4) pi is rounded to `native`
    as torch forms it. J: NaN at +-inf, J_1 odd; Y: -inf at 0, NaN below
    0 and at +inf."""
    a = _abs(x) if kind == "j" else x
    series = a <= _J_SERIES_MAX
    mid = a <= _I_SPLIT
    s = _where(series, a, _J_SERIES_MAX)
    ser = _bessel_jy_series(s)
    m = _where(series | ~mid, _J_SERIES_MAX, a)
    mil = _bessel_jy_miller(m, kind == "y")
    b = _where(mid, _I_SPLIT, a)
    p, q = _hankel_pq(nu, b)
    shift = (0.5 * nu + 0.25) * math.pi
    chi = _cast(_cast(b, native) - shift, "float64")
    c, sn = _cos(chi), _sin(chi)
    amp = _sqrt((2.0 / math.pi) / b)
    i = nu + (2 if kind == "y" else 0)
    if kind == "j":
        asy = amp * (p * c - q * sn)
    else:
        asy = amp * (p * sn + q * c)
    r = _where(series, ser[i], _where(mid, mil[i], asy))
    if kind == "j":
        return _where(x < 0, -r, r) if nu else r
    r = _where(x == 0.0, -_INF, r)
    return _where(x < 0.0, _NAN, r)


def _spherical_j0(x):
    """sin(x) / x: 1 at 0, 0 at +-inf."""
    r = _where(x == 0.0, 1.0, _sin(x) / x)
    return _where(_abs(x) == _INF, 0.0, r)


# Airy's Ai: for -_AIRY_NEG <= x <= _AIRY_POS its Maclaurin series
#   Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f = sum_k 3^k (1/3)_k x^3k / (3k)!,
#   g = sum_k 3^k (2/3)_k x^(3k+1) / (3k+1)!;
# above, Ai(x) = sqrt(x/3) / pi K_1/3(zeta) with zeta = 2/3 x^(3/2) (by the
# trapezoidal rule, then the large-argument expansion, as K_0 and K_1);
# below, the expansion Ai(-x) ~ (P sin(zeta + pi/4) - Q cos(zeta + pi/4))
# / (sqrt(pi) x^(1/4)), P = sum_k (-1)^k u_2k / zeta^2k,
# Q = sum_k (-1)^k u_2k+1 / zeta^(2k+1), u_k = (2k+1)(2k+3)...(6k-1) /
# (216^k k!), _AIRY_ASYM terms (the expansion diverges: more make it
# worse). At x = -_AIRY_NEG both are within 1e-9 of Ai's amplitude, the
# series by cancellation, the expansion by its truncation.
_AIRY_NEG = 6.8
_AIRY_POS = (1.5 * _K_SERIES_MAX) ** (2.0 / 3.0)  # zeta = 2
_AIRY_SERIES = 24
_AIRY_ASYM = 24
_AIRY_ZERO = 103.892  # torch's Ai is 0 above


def _airy_u(n):
    """u_0 .. u_{n-1}."""
    out = []
    for k in range(n):
        num = math.prod(range(2 * k + 1, 6 * k, 2))
        out.append(Fraction(num, 216 ** k * math.factorial(k)))
    return out


def _airy_ai(x, native):
    """Ai(x); NaN at +-inf (and NaN) and 0 above torch's cut-off. Below
    -_AIRY_NEG the phase zeta + pi/4 is formed in `native` as torch forms
    it."""
    ai0 = 1.0 / (3.0 ** (2.0 / 3.0) * math.gamma(2.0 / 3.0))
    dai0 = -1.0 / (3.0 ** (1.0 / 3.0) * math.gamma(1.0 / 3.0))
    series = (x >= -_AIRY_NEG) & (x <= _AIRY_POS)
    s = _where(series, x, 0.0)
    cube = s * s * s
    f, g = [Fraction(1)], [Fraction(1)]
    for k in range(1, _AIRY_SERIES):
        f.append(f[-1] / ((3 * k - 1) * 3 * k))
        g.append(g[-1] / (3 * k * (3 * k + 1)))
    ser = ai0 * _poly(cube, f) + dai0 * s * _poly(cube, g)
    u = _airy_u(_AIRY_ASYM)
    # x > _AIRY_POS: through K_1/3, whose expansion's coefficients are
    # a_k(1/3) = (-1)^k u_k.
    pos = _where(x > _AIRY_POS, x, _AIRY_POS)
    rp = _sqrt(pos)
    zp = (2.0 / 3.0) * pos * rp
    zq = _where(zp <= _I_SPLIT, zp, _I_SPLIT)
    quad = _k_quadrature(1.0 / 3.0, zq)
    za = _where(zp <= _I_SPLIT, _I_SPLIT, zp)
    big = _poly(-1.0 / za, u[:_I_ASYM]) * _sqrt((0.5 * math.pi) / za)
    kz = _where(zp <= _I_SPLIT, quad, big)
    right = _sqrt(pos * (1.0 / 3.0)) * (1.0 / math.pi) * kz * _exp(-zp)
    # x < -_AIRY_NEG: the oscillating expansion.
    neg = _where(x < -_AIRY_NEG, x, -_AIRY_NEG)
    t = -neg
    rt = _sqrt(t)
    z = (2.0 / 3.0) * t * rt
    xn = _cast(neg, native)
    phase = _cast((xn * -2.0) * _sqrt(-xn) / 3.0 + 0.25 * math.pi,
                  "float64")
    w = -1.0 / (z * z)
    p = _poly(w, u[0::2])
    q = _poly(w, u[1::2]) / z
    left = (p * _sin(phase) - q * _cos(phase)) / (_SQRT_PI * _sqrt(rt))
    r = _where(series, ser, _where(x > 0, right, left))
    r = _where(x > _AIRY_ZERO, 0.0, r)
    return _where((_abs(x) == _INF) | _isnan(x), _NAN, r)


# -- regularized incomplete gamma functions ----------------------------------

def _series_mul(p, q, n):
    r = [0.0] * n
    for i, a in enumerate(p[:n]):
        for j, b in enumerate(q[:n - i]):
            r[i + j] += a * b
    return r


def _series_recip(p, n):
    r = [1.0 / p[0]] + [0.0] * (n - 1)
    for k in range(1, n):
        r[k] = -sum(p[j] * r[k - j] for j in range(1, min(k, len(p) - 1) + 1)
                    ) / p[0]
    return r


def _stirling_gamma_star(n):
    """g_0 .. g_n-1 with Gamma*(a) = Gamma(a) / (sqrt(2 pi / a) (a/e)^a)
    ~ sum_k g_k / a^k: the exponential of Stirling's series."""
    e = [Fraction(0)] * n
    for k in range(1, n):
        if 2 * k - 1 < n:
            e[2 * k - 1] = _B[2 * k] / (2 * k * (2 * k - 1))
    g = [Fraction(1)] + [Fraction(0)] * (n - 1)
    for m in range(1, n):  # g' = e' g
        g[m] = sum(k * e[k] * g[m - k] for k in range(1, m + 1)) / m
    return [float(v) for v in g]


# Temme's uniform expansion for large a (DLMF 8.12):
#   Q(a, x) = erfc(eta sqrt(a/2)) / 2 + R,
#   P(a, x) = erfc(-eta sqrt(a/2)) / 2 - R,
#   R = exp(-a eta^2 / 2) / sqrt(2 pi a) sum_k c_k(eta) / a^k,
# eta^2 / 2 = lambda - 1 - log(lambda) (eta with lambda - 1's sign),
# lambda = x / a, c_0 = 1/(lambda - 1) - 1/eta and
# c_k = c_{k-1}'(eta) / eta + (-1)^k g_k / (lambda - 1). Each c_k is its
# Taylor series in eta (_TEMME_ORDER terms; the series of lambda - 1 in eta,
# by Lagrange's inversion, converges for |eta| < 2 sqrt(pi)), used for
# a > _TEMME_MIN and |lambda - 1| < _TEMME_BAND (|eta| <= 1.01), where
# _TEMME_TERMS of them leave an error below 1e-15 at a = 20.
_TEMME_MIN = 20.0
_TEMME_BAND = 0.7
_TEMME_TERMS = 7
_TEMME_ORDER = 40


_TEMME = []


def _temme_coeffs():
    """The Taylor coefficients (constant first) of c_0 .. c_{K-1} in eta,
    derived once, when first needed."""
    if _TEMME:
        return _TEMME
    n = _TEMME_ORDER + _TEMME_TERMS + 2
    # eta = mu sqrt(h(mu)), mu = lambda - 1,
    # h = 2 (mu - log(1 + mu)) / mu^2 = sum_k 2 (-1)^k mu^k / (k + 2).
    h = [2.0 * (-1) ** k / (k + 2) for k in range(n)]
    r = [1.0] + [0.0] * (n - 1)  # sqrt(h), h_0 = 1
    for k in range(1, n):
        r[k] = (h[k] - sum(r[j] * r[k - j] for j in range(1, k))) / 2.0
    inv = _series_recip(r, n)
    # Lagrange: [eta^k] mu = [mu^(k-1)] (1 / r)^k / k.
    mu, power = [0.0] * n, [1.0] + [0.0] * (n - 1)
    for k in range(1, n):
        power = _series_mul(power, inv, n)
        mu[k] = power[k - 1] / k
    s = _series_recip(mu[1:] + [0.0], n)  # eta / mu
    g = _stirling_gamma_star(_TEMME_TERMS)
    c = s[1:]  # c_0 = (eta/mu - 1) / eta
    out = [c]
    for k in range(1, _TEMME_TERMS):
        d = [(j + 1) * c[j + 1] for j in range(len(c) - 1)]
        # The constant term of c' + (-1)^k g_k eta/mu vanishes: divide by eta.
        c = [d[j] + (-1) ** k * g[k] * s[j] for j in range(1, len(d))]
        out.append(c)
    _TEMME.extend(c[:_TEMME_ORDER] for c in out)
    return _TEMME


def _phi(x, a):
    """lambda - 1 - log(lambda) for lambda = x / a = 1 + mu, without
    cancellation: mu^2 sum_k (-1)^k mu^k / (k + 2) for |mu| < 1/4."""
    mu = (x - a) / a
    near = mu * mu * _poly(mu, [Fraction((-1) ** k, k + 2) for k in range(27)])
    lam = x / a
    return _where(_abs(mu) < 0.25, near, (lam - 1.0) - _log(lam))


_IGAM_SERIES = 50
_IGAM_CF = 40


def _incomplete_gamma(a, x, upper):
    """Q(a, x) (`upper`) or P(a, x), the regularized incomplete gamma
    functions: Temme's expansion for large a near x = a; else the series
    P = x^a e^-x / Gamma(a + 1) sum_k x^k / ((a + 1) ... (a + k)) below
    x = a + 1 and Legendre's continued fraction
    Q = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a)
    / (x + 5 - a - ...))) above, the other one 1 less it. The prefactor is
    exp(-a (lambda - 1 - log lambda)) / (sqrt(2 pi a) Gamma*(a)) for
    a >= _SHIFT, which keeps its relative precision. Torch's values at
    the boundary: NaN for a < 0 or x < 0, and at a = 0 unless x > 0 (where
    P = 1); P = 0 at x = 0 and at a = +inf (NaN if x is too), 1 at
    x = +inf."""
    mu = (x - a) / a
    phi = _phi(x, a)
    # x^a e^-x / Gamma(a + 1)
    big_a = a >= _SHIFT
    ab = _where(big_a, a, _SHIFT)
    w = 1.0 / (ab * ab)
    star = _exp(_poly(w, [_B[2 * k] / (2 * k * (2 * k - 1))
                          for k in range(1, _STIRLING + 1)]) / ab)
    pref = _where(big_a, _exp(-ab * phi) / (_sqrt(2.0 * math.pi * ab) * star),
                  _exp(a * _log(x) - x - _lgamma_pos(a + 1.0)))
    ser = 1.0
    for k in range(_IGAM_SERIES, 0, -1):
        ser = 1.0 + x / (a + float(k)) * ser
    p_ser = pref * ser
    t = x + float(2 * _IGAM_CF + 1) - a
    for k in range(_IGAM_CF, 0, -1):
        t = x + float(2 * k - 1) - a - float(k) * (float(k) - a) / t
    q_cf = pref * a / t
    eta = _where(mu < 0, -1.0, 1.0) * _sqrt(2.0 * phi)
    inv_a = 1.0 / a
    total = None
    for c in reversed(_temme_coeffs()):
        term = _poly(eta, c)
        total = term if total is None else total * inv_a + term
    r = _exp(-a * phi) / _sqrt(2.0 * math.pi * a) * total
    erfc_arg = eta * _sqrt(0.5 * a)
    temme = (a > _TEMME_MIN) & (_abs(mu) < _TEMME_BAND)
    low = x < a + 1.0
    if upper:
        v = _where(temme, 0.5 * _erfc(erfc_arg) + r,
                   _where(low, 1.0 - p_ser, q_cf))
        at_zero, at_inf, a_inf = 1.0, 0.0, 1.0
    else:
        v = _where(temme, 0.5 * _erfc(-erfc_arg) - r,
                   _where(low, p_ser, 1.0 - q_cf))
        at_zero, at_inf, a_inf = 0.0, 1.0, 0.0
    v = _where(x == _INF, at_inf, v)
    v = _where(a == _INF, _where(x == _INF, _NAN, a_inf), v)
    v = _where(x == 0.0, at_zero, v)
    v = _where(a == 0.0, _where(x > 0.0, 1.0 - at_zero, _NAN), v)
    return _where((x < 0.0) | (a < 0.0), _NAN, v)


# -- converters --------------------------------------------------------------

def _native(dtype):
    """The type torch computes a special function of `dtype` in."""
    return "float64" if dtype == "float64" else "float32"


def _result(x, dtype, shape):
    m = x.m
    return m.ctx.broadcast(m.ctx.cast(x.v, dtype), shape)


def _float_result(node, what):
    dtype, shape = out_type(node)
    if dtype not in FLOATS:
        raise Unsupported(f"{what} of {dtype}")
    return dtype, shape


def _elementwise(fn, what):
    """A converter of a function of one tensor, computed in float64."""
    def convert(ctx, node):
        dtype, shape = _float_result(node, what)
        x = _Math(ctx).input(node.args[0])
        return _result(fn(x), dtype, shape)
    return convert


converts(aten.lgamma.default)(_elementwise(_lgamma, "lgamma"))
converts(aten.digamma.default)(_elementwise(_digamma, "digamma"))
converts(aten.erfc.default)(_elementwise(_erfc, "erfc"))
converts(aten.special_erfcx.default)(_elementwise(_erfcx, "erfcx"))
converts(aten.special_log_ndtr.default)(_elementwise(_log_ndtr, "log_ndtr"))
converts(aten.erfinv.default)(_elementwise(_erfinv, "erfinv"))
converts(aten.special_ndtri.default)(_elementwise(_ndtri, "ndtri"))


def _jy_op(ctx, node, nu, kind):
    dtype, shape = _float_result(node, "a Bessel function")
    x = _Math(ctx).input(node.args[0])
    return _result(_bessel_jy(nu, kind, x, _native(dtype)), dtype, shape)


def _bessel_i_op(nu, scaled):
    def convert(ctx, node):
        dtype, shape = _float_result(node, "a Bessel function")
        x = _Math(ctx).input(node.args[0])
        return _result(_bessel_i(nu, x, scaled, _native(dtype)), dtype, shape)
    return convert


converts(aten.i0.default, aten.special_modified_bessel_i0.default)(
    _bessel_i_op(0, False))
converts(aten.special_i1.default, aten.special_modified_bessel_i1.default)(
    _bessel_i_op(1, False))
converts(aten.special_i0e.default)(_bessel_i_op(0, True))
converts(aten.special_i1e.default)(_bessel_i_op(1, True))
for _op, _nu, _kind in [
        (aten.special_bessel_j0, 0, "j"), (aten.special_bessel_j1, 1, "j"),
        (aten.special_bessel_y0, 0, "y"), (aten.special_bessel_y1, 1, "y")]:
    converts(_op.default)(
        lambda ctx, node, nu=_nu, kind=_kind: _jy_op(ctx, node, nu, kind))
converts(aten.special_spherical_bessel_j0.default)(
    _elementwise(_spherical_j0, "spherical_bessel_j0"))


@converts(aten.special_airy_ai.default)
def _airy_op(ctx, node):
    dtype, shape = _float_result(node, "airy_ai")
    x = _Math(ctx).input(node.args[0])
    return _result(_airy_ai(x, _native(dtype)), dtype, shape)


for _op, _nu, _scaled in [
        (aten.special_modified_bessel_k0, 0, False),
        (aten.special_modified_bessel_k1, 1, False),
        (aten.special_scaled_modified_bessel_k0, 0, True),
        (aten.special_scaled_modified_bessel_k1, 1, True)]:
    converts(_op.default)(_elementwise(
        lambda x, nu=_nu, scaled=_scaled: _bessel_k(nu, x, scaled),
        "a Bessel function"))


@converts(aten.polygamma.default)
def _polygamma_op(ctx, node):
    dtype, shape = _float_result(node, "polygamma")
    a = named(node)
    n = a["n"]
    if not isinstance(n, int) or n < 0:
        raise Unsupported("polygamma of an order other than an int >= 0")
    x = _Math(ctx).input(a["self"])
    if n == 0:
        r = _digamma(x)
    elif n == 1:
        r = _trigamma(x, _native(dtype))
    else:
        r = _polygamma(n, x)
    return _result(r, dtype, shape)


@converts(aten.igamma.default, aten.igammac.default)
def _igamma_op(ctx, node):
    dtype, shape = _float_result(node, "igamma")
    m = _Math(ctx)
    a, x = (m.input(v, shape=shape) for v in node.args[:2])
    upper = node.target == aten.igammac.default
    return _result(_incomplete_gamma(a, x, upper), dtype, shape)


@converts(aten.special_zeta.default, aten.special_zeta.self_scalar,
          aten.special_zeta.other_scalar)
def _zeta_op(ctx, node):
    dtype, shape = _float_result(node, "zeta")
    m = _Math(ctx)
    s, q = (m.input(a, shape=shape) for a in node.args[:2])
    return _result(_zeta(s, q), dtype, shape)
