"""torch.compile(backend="tcc") of integer and boolean arithmetic against
eager, at the edges where C++ semantics, not the obvious formula, decide:
negative integer powers, shifts by the width or more, gcd and lcm at the
type's extremes (and lcm's wrap-around in narrow types), scatter
reductions of booleans (a sum is an or, a product an and) and integer
means (rounded down), rounding functions of integers. Results compare
exactly; every test compiles with the eager fallback off."""

import pytest
import torch

from conftest import tcc_compile

INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]


def check(fn, *inputs):
    compiled = tcc_compile(fn, fallback=False)
    with torch.no_grad():
        want = fn(*inputs)
        got = compiled(*inputs)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def extremes(dtype, lowest=True):
    """Small values, both signs, and the type's extremes (without its
    lowest value where `lowest` is false)."""
    info = torch.iinfo(dtype)
    v = [0, 1, -1, 2, -2, 3, 7, -12, 18, 55, 89, 127, info.max,
         info.max - 1, info.min + 1] + ([info.min] if lowest else [])
    return torch.tensor(v, dtype=torch.int64).clamp(
        info.min, info.max).to(dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_gcd_lcm(dtype):
    # Not the lowest value: eager's kernel traps on it (INT_MIN % -1 in
    # Euclid's steps of int32 and int64: SIGFPE).
    v = extremes(dtype, lowest=False)
    a, b = v[:, None].expand(-1, len(v)), v[None, :].expand(len(v), -1)
    check(lambda a, b: (torch.gcd(a, b), torch.lcm(a, b)),
          a.contiguous(), b.contiguous())


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_negative_powers(dtype):
    """1 for a base of 1, -1 or 1 for -1 by the exponent's parity, 0
    otherwise (also for a base of 0)."""
    base = torch.tensor([-3, -2, -1, 0, 1, 2, 3], dtype=dtype)[:, None]
    exp = torch.tensor([-3, -2, -1, 0, 1, 2, 5], dtype=dtype)[None, :]
    check(torch.pow, base.expand(-1, 7).contiguous(),
          exp.expand(7, -1).contiguous())


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64])
def test_shifts(dtype):
    """By the width or more, or a negative amount: 0 to the left, the sign
    bits to the right."""
    bits = torch.iinfo(dtype).bits
    x = extremes(dtype)[:, None].expand(-1, 6).contiguous()
    s = torch.tensor([0, 1, bits - 1, bits, bits + 3, -1],
                     dtype=dtype)[None, :].expand(x.shape[0], -1).contiguous()
    check(lambda x, s: (x << s, x >> s, torch.bitwise_left_shift(x, 2)),
          x, s)


@pytest.mark.parametrize("reduce", ["sum", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_bool_scatter_reduce(reduce, include_self):
    torch.manual_seed(0)
    x = torch.rand(6, 5) > 0.5
    src = torch.rand(9, 5) > 0.5
    index = torch.randint(0, 6, (9, 5))
    check(lambda x, i, s: x.scatter_reduce(0, i, s, reduce,
                                           include_self=include_self),
          x, index, src)


def test_bool_scatter_add_and_index_add():
    torch.manual_seed(1)
    x = torch.rand(5, 4) > 0.7
    src = torch.rand(7, 4) > 0.5
    index = torch.randint(0, 5, (7, 4))
    rows = torch.tensor([0, 2, 2, 4, 0, 1, 3])
    check(lambda x, i, s, r: (x.scatter_add(0, i, s),
                              x.index_add(0, r, s)), x, index, src, rows)


def test_bool_orderings():
    """Max, min, sorting and sign of booleans (as 0 and 1)."""
    torch.manual_seed(2)
    x = torch.rand(4, 7) > 0.5
    check(lambda x: (x.amax(1), x.amin(0), torch.max(x, 1).values,
                     torch.max(x, 1).indices, x.sort(dim=1, stable=True).values,
                     x.sort(dim=1, stable=True).indices, torch.sign(x),
                     torch.fmax(x, x.flip(0))), x)


@pytest.mark.parametrize("include_self", [True, False])
def test_integer_mean_rounds_down(include_self):
    x = torch.tensor([-7, 5, 0, -1, 9], dtype=torch.int64)
    src = torch.tensor([-4, 3, -2, 8, -9, 1, 6], dtype=torch.int64)
    index = torch.tensor([0, 0, 1, 1, 3, 3, 3])
    check(lambda x, i, s: x.scatter_reduce(0, i, s, "mean",
                                           include_self=include_self),
          x, index, src)


def test_integer_rounding_is_identity():
    x = extremes(torch.int64)
    check(lambda x: (torch.floor(x), torch.ceil(x), torch.round(x),
                     torch.trunc(x)), x)


def test_tri_indices():
    check(lambda x: (torch.tril_indices(5, 4, -1) + x,
                     torch.triu_indices(3, 6, 2) + x),
          torch.tensor(0))
