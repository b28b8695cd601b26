"""torch.compile(backend="tcc") of torch's special functions (special.py)
against eager over dense grids that cover every regime of each: negative
arguments, the poles and their neighbourhoods, 0 and -0, tiny and huge
magnitudes, +-inf and NaN, and the seams where special.py switches from a
series to a recurrence, a quadrature or an asymptotic expansion.

Tolerances: float32 rtol 1e-4, atol 1e-5, as the frontend's other tests
and the OpInfo suite. tcc computes in float64 and rounds once; torch
computes most of these in float32, so the two differ by torch's own
rounding error, which the atol covers where a function passes through zero
(digamma's roots, the Bessel functions' zeros). float64: rtol 1e-7,
atol 1e-7 (the OpInfo suite's), except where torch's float64 forms are
off themselves (checked against mpmath, to whose values tcc's agree within
1e-15 there): the Bessel functions of the first and second kind by up to
9e-7 between 2 and 8, Airy's Ai by 3e-6 near -2.09 (compared with atol
5e-6), and the Hurwitz zeta function at negative q, whose direct sum
cancels (up to 7e-7; atol 1e-6). Every test compiles with the
eager fallback off, so everything shown ran in tcc.
"""

import math

import pytest
import torch

from conftest import tcc_compile

TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-7, 1e-7)}
SPECIALS = [math.inf, -math.inf, math.nan, 0.0, -0.0]


def grid(dtype, lo=-20.0, hi=20.0, step=1e-3, tail=38, negative_tail=True):
    """A dense line from lo to hi, the integers and half-integers around
    it, magnitudes from 1e-tail to 1e+tail of both signs, and the special
    values."""
    parts = [torch.arange(lo, hi + step / 2, step, dtype=torch.float64),
             torch.arange(-50.0, 51.0), torch.arange(-50.5, 51.0),
             torch.logspace(-tail, tail, 1000, dtype=torch.float64),
             torch.tensor(SPECIALS, dtype=torch.float64)]
    if negative_tail:
        parts.append(-torch.logspace(-tail, tail, 1000, dtype=torch.float64))
    return torch.cat(parts).to(dtype)


def check(fn, *inputs, atol=None):
    """fn compiled against eager on the same inputs."""
    compiled = tcc_compile(fn, fallback=False)
    with torch.no_grad():
        want = fn(*inputs)
        got = compiled(*inputs)
    rtol, default_atol = TOLERANCES[inputs[0].dtype]
    torch.testing.assert_close(got, want, rtol=rtol,
                               atol=default_atol if atol is None else atol,
                               equal_nan=True)


DTYPES = pytest.mark.parametrize("dtype", [torch.float32, torch.float64])


@DTYPES
def test_gamma_family(dtype):
    """lgamma, digamma, polygamma 1 to 4 (trigamma and n! zeta(n + 1, x)),
    mvlgamma: the reflection formulas below 0, the recurrence up to the
    Stirling series, the poles at the non-positive integers (torch's
    finite values of trigamma there included). polygamma n >= 2 takes
    time in eager proportional to |x| for negative x, so those stop at
    -1e3."""
    x = grid(dtype)

    def fn(x):
        return (torch.lgamma(x), torch.digamma(x), torch.polygamma(1, x),
                torch.special.gammaln(x), torch.special.psi(x))

    check(fn, x)
    y = x[(x > -1e3) | ~torch.isfinite(x)]
    check(lambda y: tuple(torch.polygamma(n, y) for n in (2, 3, 4)), y)
    z = grid(dtype, 1.0, 30.0, 1e-2, negative_tail=False)
    z = z[z > 1.0]
    check(lambda z: (torch.mvlgamma(z, 1), torch.mvlgamma(z, 3),
                     torch.mvlgamma(z, 5)), z)


@DTYPES
def test_zeta(dtype):
    """The Hurwitz zeta function on an (s, q) grid: s from below 1 to 60
    (the integers among them, where negative q has values), q from -12 to
    1e6 and the special values of both."""
    s = torch.cat([torch.linspace(0.5, 12, 47, dtype=torch.float64),
                   torch.arange(1.0, 61.0), torch.tensor(
                       [1.0 + 1e-6, 1e10, math.inf, -math.inf, math.nan],
                       dtype=torch.float64)]).to(dtype)
    q = torch.cat([torch.linspace(-12, 12, 481, dtype=torch.float64),
                   torch.logspace(-20, 6, 53, dtype=torch.float64),
                   torch.tensor(SPECIALS, dtype=torch.float64)]).to(dtype)
    check(torch.special.zeta, s[:, None], q[None, :],
          atol=1e-6 if dtype == torch.float64 else None)


@DTYPES
def test_error_function_relatives(dtype):
    """erfc, erfcx, log_ndtr (the split between erf and the continued
    fraction at 2, underflow of erfc, overflow of erfcx), erfinv and ndtri
    (the middle, the tails down to the smallest numbers, +-1 and 0 and 1,
    NaN outside)."""
    x = grid(dtype, -30, 30, 2e-3, tail=300 if dtype == torch.float64 else 38)
    check(lambda x: (torch.erfc(x), torch.special.erfcx(x),
                     torch.special.log_ndtr(x)), x)
    tiny = 300 if dtype == torch.float64 else 38
    y = torch.cat([torch.linspace(-1, 1, 20001, dtype=torch.float64),
                   1 - torch.logspace(-15, 0, 500, dtype=torch.float64),
                   torch.logspace(-tiny, 0, 500, dtype=torch.float64),
                   torch.tensor([1.5, -1.5] + SPECIALS, dtype=torch.float64)])
    y = y.to(dtype)
    p = (y + 1) / 2
    check(lambda y, p: (torch.erfinv(y), torch.erfinv(-y),
                        torch.special.ndtri(p), torch.special.ndtri(y)),
          y, p)


@DTYPES
def test_modified_bessel(dtype):
    """I_0 and I_1 (the series up to 20, the expansion beyond, float32's
    overflow of torch's e^|x| near 88.7), scaled and not, both torch
    spellings; K_0 and K_1 (the series up to 2, the quadrature, the
    expansion beyond 20), scaled and not."""
    x = torch.cat([grid(dtype, -100, 100, 5e-3),
                   torch.linspace(700, 720, 201, dtype=dtype)])

    def fn(x):
        s = torch.special
        return (torch.i0(x), s.i0e(x), s.i1(x), s.i1e(x),
                s.modified_bessel_i0(x), s.modified_bessel_i1(x),
                s.modified_bessel_k0(x), s.modified_bessel_k1(x),
                s.scaled_modified_bessel_k0(x),
                s.scaled_modified_bessel_k1(x))

    check(fn, x)


@DTYPES
def test_bessel(dtype):
    """J_0, J_1, Y_0, Y_1 (the series up to 2, Miller's recurrence up to
    20, Hankel's expansion beyond with torch's rounding of the phase, out
    to 1e6), the spherical j_0, Airy's Ai (its series, its decay through
    K_1/3, its oscillation below -6.8, torch's 0 above 103.892)."""
    x = torch.cat([grid(dtype, -200, 200, 5e-3),
                   torch.linspace(1e4, 1e6, 5001, dtype=dtype),
                   -torch.linspace(1e3, 1e5, 2001, dtype=dtype)])

    def fn(x):
        s = torch.special
        return (s.bessel_j0(x), s.bessel_j1(x), s.bessel_y0(x),
                s.bessel_y1(x), s.spherical_bessel_j0(x), s.airy_ai(x))

    check(fn, x, atol=5e-6 if dtype == torch.float64 else None)


@DTYPES
def test_incomplete_gamma(dtype):
    """igamma and igammac on an (a, x) grid: the series below x = a + 1,
    the continued fraction above, Temme's expansion for a > 20 near
    x = a (out to a = 1e6), tiny a and x, and torch's boundary values
    (negative arguments, a = 0, x = 0, the infinities, NaN)."""
    ends = [1e-30, 1e-6, 50.0, 100.0, 1e3, 1e4, 1e6] + SPECIALS
    a = torch.cat([torch.arange(-1.0, 30.0, 0.25, dtype=torch.float64),
                   torch.tensor(ends, dtype=torch.float64)]).to(dtype)
    x = torch.cat([torch.arange(-1.0, 40.0, 0.25, dtype=torch.float64),
                   torch.tensor(ends + [60.0, 1.01e4, 9.9e5],
                                dtype=torch.float64)]).to(dtype)
    check(lambda a, x: (torch.igamma(a, x), torch.igammac(a, x)),
          a[:, None], x[None, :])
