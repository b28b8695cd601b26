"""torch.compile(backend="tcc") of dense linear algebra (linalg.py) against
eager: LU and what is built on it (solves, inverses, determinants),
Cholesky, triangular solves and Householder QR, batched and not, from 1x1
to the largest size tcc unrolls, singular and indefinite matrices (info),
empty ones, and the refusal above the size limit.

Tolerances: rtol 1e-4, atol 1e-5, as the frontend's other tests. tcc
computes float32 matrices in float64 and rounds the result; LAPACK computes
in float32. The two differ by torch's own rounding error, about the
condition number times float32's epsilon (and the size), so the inputs are
well conditioned: random orthogonal matrices with scaled columns (condition
number 2 at most, and rows of similar magnitude, so partial pivoting swaps
rows as for any random matrix), shifted Gram matrices, triangular matrices
with a dominant diagonal. Pivots and info are integers, compared exactly:
the factorizations pivot as LAPACK does. Every test compiles with the eager
fallback off, so everything shown ran in tcc.
"""

import pytest
import torch

from conftest import tcc_compile

RTOL, ATOL = 1e-4, 1e-5
LARGEST = 64  # linalg.MAX_SIZE


def check(fn, *inputs):
    """fn compiled against eager on the same inputs; the compiled results."""
    compiled = tcc_compile(fn, fallback=False)
    with torch.no_grad():
        want = fn(*inputs)
        got = compiled(*inputs)
    torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL,
                               equal_nan=True)
    return got


def general(*shape):
    """Random matrices with condition number at most 2: orthogonal, their
    columns scaled by 1 to 2."""
    n = shape[-1]
    q, _ = torch.linalg.qr(torch.randn(*shape[:-2], shape[-2], shape[-2]))
    q = q[..., :n] if n <= shape[-2] else torch.cat(
        [q, torch.randn(*shape[:-2], shape[-2], n - shape[-2])], -1)
    return q * (1 + torch.rand(*shape[:-2], 1, n))


def spd(*shape):
    """Symmetric positive definite matrices, eigenvalues in [n, 2n]."""
    n = shape[-1]
    a = torch.randn(*shape) / n ** 0.5
    return a @ a.mT / 4 + n * torch.eye(n)


def triangular(*shape):
    """Matrices whose triangles have a dominant diagonal; both triangles
    are random, as the solves read only the one they are told to."""
    n = shape[-1]
    return torch.randn(*shape) / n + torch.diag_embed(
        torch.rand(*shape[:-1]) + 1)


# -- LU ----------------------------------------------------------------------

def test_lu_factor_pivots_as_lapack():
    def fn(a, b, c, d, e):
        return [torch.linalg.lu_factor_ex(x) for x in (a, b, c, d, e)]
    got = check(fn, torch.randn(1, 1), torch.randn(4, 4), torch.randn(3, 5, 5),
                torch.randn(2, 3, 6, 4), torch.randn(3, 6))
    assert [r.pivots.dtype for r in got] == [torch.int32] * 5


def test_lu_and_unpack():
    def fn(a, b):
        lu, piv = torch.linalg.lu_factor(b)
        return torch.linalg.lu(a), torch.lu_unpack(lu, piv)
    check(fn, torch.randn(2, 5, 3), torch.randn(3, 4, 4))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(left, adjoint):
    a = general(2, 5, 5)
    b = torch.randn(2, 5, 3) if left else torch.randn(2, 3, 5)
    lu, piv = torch.linalg.lu_factor(a)
    check(lambda lu, piv, b: torch.linalg.lu_solve(lu, piv, b, left=left,
                                                   adjoint=adjoint),
          lu, piv, b)


def singular():
    """A matrix whose second column is zero: the LU's second pivot is
    exactly zero (info 2), its determinant 0."""
    a = torch.randn(2, 4, 4)
    a[0, :, 1] = 0
    return a


def test_singular_lu_info():
    got = check(torch.linalg.lu_factor_ex, singular())
    assert got.info.tolist() == [2, 0]


# -- inverse, solve, determinants ------------------------------------------

def test_inverse():
    def fn(a, b, c):
        return torch.linalg.inv(a), torch.linalg.inv(b), torch.linalg.inv(c)
    check(fn, torch.tensor([[4.0]]), general(6, 6), general(2, 3, 4, 4))


def test_inverse_of_a_singular_matrix():
    # Eager torch.linalg.inv raises here; inv_ex reports info, and the
    # compiled inverse of the singular matrix is not finite.
    a = singular()
    compiled = tcc_compile(torch.linalg.inv_ex, fallback=False)
    inverse, info = compiled(a)
    assert info.tolist() == torch.linalg.inv_ex(a).info.tolist() == [2, 0]
    assert not inverse[0].isfinite().all()
    torch.testing.assert_close(inverse[1], torch.linalg.inv(a[1]),
                               rtol=RTOL, atol=1e-4)


def test_solve():
    def fn(a, v, m, batched, r):
        return (torch.linalg.solve(a, v),          # a vector
                torch.linalg.solve(a, m),          # columns
                torch.linalg.solve(batched, m),    # batch broadcast
                torch.linalg.solve(batched, r, left=False),
                torch.linalg.solve_ex(batched, v))
    check(fn, general(5, 5), torch.randn(5), torch.randn(5, 2),
          general(3, 5, 5), torch.randn(3, 4, 5))


def test_det_and_slogdet():
    def fn(a, b, s):
        return (torch.linalg.det(a), torch.linalg.slogdet(a),
                torch.logdet(b), torch.linalg.det(s), torch.linalg.slogdet(s))
    a = torch.randn(3, 5, 5)
    check(fn, a, a @ a.mT + torch.eye(5), singular())


# -- Cholesky --------------------------------------------------------------

@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper):
    def fn(a, b, c):
        return [torch.linalg.cholesky(x, upper=upper) for x in (a, b, c)]
    check(fn, torch.tensor([[9.0]]), spd(5, 5), spd(2, 3, 4, 4))


def test_cholesky_info_of_an_indefinite_matrix():
    a = spd(3, 4, 4)
    a[1, 2, 2] = -100.0  # the third leading minor is the first negative one
    compiled = tcc_compile(torch.linalg.cholesky_ex, fallback=False)
    factor, info = compiled(a)
    assert info.tolist() == torch.linalg.cholesky_ex(a).info.tolist() == \
        [0, 3, 0]
    want = torch.linalg.cholesky(a[[0, 2]])
    torch.testing.assert_close(factor[[0, 2]], want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper):
    a = spd(2, 5, 5)
    factor = torch.linalg.cholesky(a, upper=upper)
    check(lambda f, b: (torch.cholesky_solve(b, f, upper=upper),
                        torch.cholesky_inverse(f, upper=upper)),
          factor, torch.randn(2, 5, 3))


# -- triangular solves -----------------------------------------------------

@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular(upper, left):
    t = triangular(2, 5, 5)
    b = torch.randn(2, 5, 3) if left else torch.randn(2, 3, 5)
    check(lambda t, b: (
        torch.linalg.solve_triangular(t, b, upper=upper, left=left),
        torch.linalg.solve_triangular(t, b, upper=upper, left=left,
                                      unitriangular=True)), t, b)


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("transpose", [False, True])
def test_triangular_solve(transpose):
    t = triangular(4, 4)
    check(lambda b, t: torch.triangular_solve(b, t, upper=False,
                                              transpose=transpose),
          torch.randn(3, 4, 2), t)


def test_a_matrix_solved_for_itself():
    # The same tensor as coefficients and right-hand side: the solves must
    # not write over what they still read.
    t = triangular(2, 4, 4)
    check(lambda t: (torch.linalg.solve_triangular(t, t, upper=True),
                     torch.linalg.solve(t, t)), t)


# -- Householder QR --------------------------------------------------------

@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(mode):
    def fn(a, b, c, d):
        return [torch.linalg.qr(x, mode=mode) for x in (a, b, c, d)]
    check(fn, torch.tensor([[-2.0]]), torch.randn(6, 4), torch.randn(3, 5),
          torch.randn(2, 4, 4))


def test_geqrf_householder_product_ormqr():
    a, c = torch.randn(2, 5, 3), torch.randn(2, 5, 4)

    def fn(a, c):
        packed, tau = torch.geqrf(a)
        return (packed, tau, torch.linalg.householder_product(packed, tau),
                torch.ormqr(packed, tau, c),
                torch.ormqr(packed, tau, c, transpose=True),
                torch.ormqr(packed, tau, c.mT, left=False))
    check(fn, a, c)


# -- edges -----------------------------------------------------------------

def test_empty_matrices():
    def fn(a, b, c):
        return (torch.linalg.inv(a), torch.linalg.det(a), torch.linalg.det(b),
                torch.linalg.slogdet(b), torch.linalg.lu_factor_ex(c),
                torch.linalg.cholesky(a), torch.linalg.qr(c))
    got = check(fn, torch.randn(0, 3, 3), torch.randn(2, 0, 0),
                torch.randn(3, 0))
    assert got[2].tolist() == [1.0, 1.0]  # the determinant of 0x0 is 1


def test_the_largest_size():
    n = LARGEST
    check(lambda a, s: (torch.linalg.inv(a), torch.linalg.cholesky(s)),
          general(n, n), spd(n, n))


def test_larger_matrices_are_refused():
    n = LARGEST + 1
    compiled = tcc_compile(torch.linalg.inv, fallback=False)
    with pytest.raises(Exception, match=f"up to {LARGEST}x{LARGEST}"):
        compiled(general(n, n))
