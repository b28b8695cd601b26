"""Gradient checks of tcc-autodiff, one per differentiable op family.

Each case is a small tcc function `@fwd(inputs..., r) -> sum(op(inputs) * r)`
(r, a fixed random tensor, makes every output element matter differently).
tcc-opt --tcc-autodiff builds its gradient function as `@main`, tcc compiles
it to a shared library, and the binding runs it in float64. Its gradients are
compared with

  * PyTorch autograd on the same function (rtol 1e-7, atol 1e-9: both are
    float64 evaluations of the same formulas up to summation order), and
  * central finite differences of the compiled loss itself (eps 1e-6,
    atol 1e-5, rtol 1e-3: the tolerances of torch.autograd.gradcheck).

Inputs are drawn away from kinks (relu, abs, clamp, max pooling ties) so
that finite differences are defined.
"""

import os
import subprocess

import numpy as np
import pytest

import tcc

torch = pytest.importorskip("torch")
F = torch.nn.functional

T = "f64"


def ty(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + T + ">"


# name: (input shapes, input domains, result shape, body, torch function)
# The body reads %a0, %a1, ... and defines %y.
CASES = {
    "add_broadcast": ([(2, 3), (3,)], "nn", (2, 3),
                      "%y = tcc.add %a0, %a1 : ({0}, {1}) -> {y}",
                      lambda a, b: a + b),
    "sub": ([(2, 3), (2, 3)], "nn", (2, 3),
            "%y = tcc.sub %a0, %a1 : ({0}, {1}) -> {y}", lambda a, b: a - b),
    "mul_broadcast": ([(2, 1), (1, 3)], "nn", (2, 3),
                      "%y = tcc.mul %a0, %a1 : ({0}, {1}) -> {y}",
                      lambda a, b: a * b),
    "div": ([(2, 3), (3,)], "np", (2, 3),
            "%y = tcc.div %a0, %a1 : ({0}, {1}) -> {y}", lambda a, b: a / b),
    "pow": ([(2, 3), (2, 3)], "pn", (2, 3),
            "%y = tcc.pow %a0, %a1 : ({0}, {1}) -> {y}",
            lambda a, b: torch.pow(a, b)),
    "max": ([(2, 3), (2, 3)], "nn", (2, 3),
            "%y = tcc.max %a0, %a1 : ({0}, {1}) -> {y}", torch.maximum),
    "neg": ([(2, 3)], "n", (2, 3), "%y = tcc.neg %a0 : {y}", torch.neg),
    "abs": ([(2, 3)], "n", (2, 3), "%y = tcc.abs %a0 : {y}", torch.abs),
    "exp": ([(2, 3)], "n", (2, 3), "%y = tcc.exp %a0 : {y}", torch.exp),
    "log": ([(2, 3)], "p", (2, 3), "%y = tcc.log %a0 : {y}", torch.log),
    "sqrt": ([(2, 3)], "p", (2, 3), "%y = tcc.sqrt %a0 : {y}", torch.sqrt),
    "rsqrt": ([(2, 3)], "p", (2, 3), "%y = tcc.rsqrt %a0 : {y}", torch.rsqrt),
    "tanh": ([(2, 3)], "n", (2, 3), "%y = tcc.tanh %a0 : {y}", torch.tanh),
    "sigmoid": ([(2, 3)], "n", (2, 3), "%y = tcc.sigmoid %a0 : {y}",
                torch.sigmoid),
    "erf": ([(2, 3)], "n", (2, 3), "%y = tcc.erf %a0 : {y}", torch.erf),
    "relu": ([(2, 3)], "n", (2, 3), "%y = tcc.relu %a0 : {y}", torch.relu),
    "gelu": ([(2, 3)], "n", (2, 3), "%y = tcc.gelu %a0 : {y}", F.gelu),
    "gelu_tanh": ([(2, 3)], "n", (2, 3),
                  "%y = tcc.gelu %a0 approximate = tanh : {y}",
                  lambda x: F.gelu(x, approximate="tanh")),
    "clamp": ([(2, 3)], "n", (2, 3),
              "%y = tcc.clamp %a0 min = -0.5 max = 0.5 : {y}",
              lambda x: torch.clamp(x, -0.5, 0.5)),
    "matmul_batched": ([(2, 3, 4), (4, 5)], "nn", (2, 3, 5),
                       "%y = tcc.matmul %a0, %a1 : ({0}, {1}) -> {y}",
                       torch.matmul),
    "conv2d": ([(1, 2, 5, 5), (3, 2, 3, 3), (3,)], "nnn", (1, 3, 3, 3),
               "%y = tcc.conv %a0, %a1, %a2 strides = [2, 2] padding = [1, 1, 1, 1] "
               "dilations = [1, 1] groups = 1 : ({0}, {1}, {2}) -> {y}",
               lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)),
    "conv2d_dilated": ([(2, 2, 7, 6), (3, 2, 2, 3), (3,)], "nnn", (2, 3, 6, 3),
                       "%y = tcc.conv %a0, %a1, %a2 strides = [1, 2] padding = [1, 0, 0, 2] "
                       "dilations = [2, 1] groups = 1 : ({0}, {1}, {2}) -> {y}",
                       lambda x, w, b: F.conv2d(F.pad(x, (0, 2, 1, 0)), w, b, stride=(1, 2),
                                                dilation=(2, 1))),
    "conv2d_grouped": ([(1, 4, 4, 4), (4, 2, 2, 2), (4,)], "nnn", (1, 4, 3, 3),
                       "%y = tcc.conv %a0, %a1, %a2 strides = [1, 1] padding = [0, 0, 0, 0] "
                       "dilations = [1, 1] groups = 2 : ({0}, {1}, {2}) -> {y}",
                       lambda x, w, b: F.conv2d(x, w, b, groups=2)),
    "max_pool": ([(1, 2, 4, 4)], "n", (1, 2, 2, 2),
                 "%y = tcc.max_pool %a0 kernel = [2, 2] strides = [2, 2] "
                 "padding = [0, 0, 0, 0] dilations = [1, 1] : {0} -> {y}",
                 lambda x: F.max_pool2d(x, 2)),
    "avg_pool": ([(1, 2, 4, 4)], "n", (1, 2, 2, 2),
                 "%y = tcc.avg_pool %a0 kernel = [2, 2] strides = [2, 2] "
                 "padding = [0, 0, 0, 0] dilations = [1, 1] : {0} -> {y}",
                 lambda x: F.avg_pool2d(x, 2)),
    # Windows that overlap and cross the padding: the VJP's general path
    # (the 2x2 ones above tile the input, its fast path).
    "max_pool_overlapping": ([(1, 2, 5, 5)], "n", (1, 2, 3, 3),
                             "%y = tcc.max_pool %a0 kernel = [3, 3] strides = [2, 2] "
                             "padding = [1, 1, 1, 1] dilations = [1, 1] : {0} -> {y}",
                             lambda x: F.max_pool2d(x, 3, 2, 1)),
    "avg_pool_overlapping": ([(1, 2, 5, 5)], "n", (1, 2, 3, 3),
                             "%y = tcc.avg_pool %a0 kernel = [3, 3] strides = [2, 2] "
                             "padding = [1, 1, 1, 1] dilations = [1, 1] : {0} -> {y}",
                             lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
    "softmax": ([(2, 4)], "n", (2, 4), "%y = tcc.softmax %a0 axis = 1 : {y}",
                lambda x: torch.softmax(x, 1)),
    "log_softmax": ([(2, 4)], "n", (2, 4),
                    "%y = tcc.log_softmax %a0 axis = 1 : {y}",
                    lambda x: torch.log_softmax(x, 1)),
    "layer_norm": ([(2, 5), (5,), (5,)], "nnn", (2, 5),
                   "%y = tcc.layer_norm %a0, %a1, %a2 axis = 1 epsilon = 1.0e-05 "
                   ": ({0}, {1}, {2}) -> {y}",
                   lambda x, g, b: F.layer_norm(x, (5,), g, b, 1e-5)),
    "reduce_mean": ([(2, 3, 4)], "n", (2, 4),
                    "%y = tcc.reduce_mean %a0 axes = [1] : {0} -> {y}",
                    lambda x: x.mean(1)),
    "reduce_prod": ([(2, 3)], "p", (2, 1),
                    "%y = tcc.reduce_prod %a0 axes = [1] keepdims : {0} -> {y}",
                    lambda x: x.prod(1, keepdim=True)),
    "reshape_transpose": ([(2, 6)], "n", (3, 4),
                          "%t = tcc.reshape %a0 : {0} -> tensor<4x3x" + T + ">\n"
                          "  %y = tcc.transpose %t perm = [1, 0] : tensor<4x3x" + T +
                          "> -> {y}",
                          lambda x: x.reshape(4, 3).t()),
    "broadcast_to": ([(3, 1)], "n", (2, 3, 4),
                     "%y = tcc.broadcast_to %a0 : {0} -> {y}",
                     lambda x: x.expand(2, 3, 4)),
    "concat": ([(2, 3), (2, 2)], "nn", (2, 5),
               "%y = tcc.concat %a0, %a1 axis = 1 : ({0}, {1}) -> {y}",
               lambda a, b: torch.cat([a, b], 1)),
    "slice_steps": ([(4, 8)], "n", (4, 4),
                    "%y = tcc.slice %a0 offsets = [0, 7] steps = [1, -2] : {0} -> {y}",
                    lambda x: x.flip(1)[:, ::2]),
    # nll_loss: the targets and class weights are constants (they carry no
    # gradient); target 1 is ignored in the weighted case.
    "nll_loss_none": ([(4, 3)], "n", (4,),
                      "%t = tcc.constant dense<[2, 0, 1, 2]> : tensor<4xi64>\n"
                      "  %y = tcc.nll_loss %a0, %t reduction = none "
                      ": ({0}, tensor<4xi64>) -> {y}",
                      lambda x: F.nll_loss(x, torch.tensor([2, 0, 1, 2]),
                                           reduction="none")),
    "nll_loss_weighted_mean": (
        [(2, 3, 2)], "n", (),
        "%t = tcc.constant dense<[[0, 2], [1, 2]]> : tensor<2x2xi64>\n"
        "  %w = tcc.constant dense<[5.0e-01, 2.0, 1.5]> : tensor<3x" + T + ">\n"
        "  %y = tcc.nll_loss %a0, %t, %w reduction = mean ignore_index = 1 "
        ": ({0}, tensor<2x2xi64>, tensor<3x" + T + ">) -> {y}",
        lambda x: F.nll_loss(x, torch.tensor([[0, 2], [1, 2]]),
                             weight=torch.tensor([0.5, 2.0, 1.5],
                                                 dtype=torch.float64),
                             ignore_index=1, reduction="mean")),
    "pad": ([(2, 3)], "n", (2, 6),
            "%y = tcc.pad %a0 low = [0, 1] high = [0, 2] mode = constant "
            "value = 0.0 : {0} -> {y}",
            lambda x: F.pad(x, (1, 2))),
}


def mlir_for(name):
    shapes, _, yshape, body, _ = CASES[name]
    body = body.format(*[ty(s) for s in shapes], y=ty(yshape))
    args = ", ".join(f"%a{i}: {ty(s)}" for i, s in enumerate(shapes))
    n = len(shapes)
    axes = ", ".join(str(i) for i in range(len(yshape)))
    return f"""func.func @fwd({args}, %r: {ty(yshape)}) -> tensor<{T}> {{
  {body}
  %p = tcc.mul %y, %r : ({ty(yshape)}, {ty(yshape)}) -> {ty(yshape)}
  %l = tcc.reduce_sum %p axes = [{axes}] : {ty(yshape)} -> tensor<{T}>
  return %l : tensor<{T}>
}}
""", n


def inputs_for(name, seed=0):
    shapes, domains, yshape, _, _ = CASES[name]
    rng = np.random.default_rng(seed)
    values = []
    for shape, domain in zip(shapes, domains):
        size = int(np.prod(shape))
        # Distinct magnitudes at least 0.05 apart keep every input away from
        # kinks and ties.
        v = (np.arange(size) + 1) * 0.1 + 0.05
        v = rng.permutation(v)
        if domain == "n":
            v = v * rng.choice([-1.0, 1.0], size)
        values.append(v.reshape(shape).astype(np.float64))
    values.append(rng.standard_normal(yshape))
    return values


@pytest.fixture(scope="module")
def tools():
    bin_dir = os.environ.get("TCC_BIN_DIR")
    if not bin_dir:
        pytest.skip("TCC_BIN_DIR is not set (ctest sets it)")
    return os.path.join(bin_dir, "tcc-opt"), os.path.join(bin_dir, "tcc")


def compile_grad(name, tools, tmp_path):
    tcc_opt, tcc_bin = tools
    text, n = mlir_for(name)
    (tmp_path / "fwd.mlir").write_text(text)
    wrt = ",".join(str(i) for i in range(n))
    subprocess.run([tcc_opt, str(tmp_path / "fwd.mlir"),
                    f"--tcc-autodiff=function=fwd grad-function=main wrt={wrt}",
                    "-o", str(tmp_path / "grad.mlir")], check=True)
    subprocess.run([tcc_bin, str(tmp_path / "grad.mlir"), "-o",
                    str(tmp_path / "grad.so")], check=True)
    return tcc.load(str(tmp_path / "grad.so")), n


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient(name, tools, tmp_path):
    model, n = compile_grad(name, tools, tmp_path)
    values = inputs_for(name)
    outs = model(*values)
    loss, grads = outs[0], outs[1:]
    assert len(grads) == n

    # PyTorch autograd on the same function.
    fn = CASES[name][4]
    ts = [torch.tensor(v, requires_grad=i < n) for i, v in enumerate(values)]
    ref = (fn(*ts[:n]) * ts[n]).sum()
    ref.backward()
    np.testing.assert_allclose(loss, ref.detach().numpy(), rtol=1e-7, atol=1e-9)
    for i in range(n):
        np.testing.assert_allclose(grads[i], ts[i].grad.numpy(), rtol=1e-7,
                                   atol=1e-9, err_msg=f"{name}: input {i}")

    # Central finite differences of the compiled loss.
    eps = 1e-6
    for i in range(n):
        fd = np.zeros_like(values[i])
        for k in range(values[i].size):
            plus = [v.copy() for v in values]
            minus = [v.copy() for v in values]
            plus[i].flat[k] += eps
            minus[i].flat[k] -= eps
            fd.flat[k] = (model(*plus)[0] - model(*minus)[0]) / (2 * eps)
        np.testing.assert_allclose(grads[i], fd, rtol=1e-3, atol=1e-5,
                                   err_msg=f"{name}: input {i} (finite differences)")


def test_missing_rule_is_an_error(tools, tmp_path):
    """An op on the gradient's path without a VJP rule (here a fusion group,
    which exists only after the graph passes) is an error naming it."""
    tcc_opt, _ = tools
    t = ty((3,))
    (tmp_path / "f.mlir").write_text(f"""func.func @fwd(%x: {t}) -> tensor<{T}> {{
  %y = tcc.fused "elementwise" (%x : {t}) -> {t} {{
  ^bb0(%a: {t}):
    %r = tcc.relu %a : {t}
    tcc.yield %r : {t}
  }}
  %l = tcc.reduce_sum %y axes = [0] : {t} -> tensor<{T}>
  return %l : tensor<{T}>
}}
""")
    r = subprocess.run([tcc_opt, str(tmp_path / "f.mlir"),
                        "--tcc-autodiff=function=fwd"],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "'tcc.fused' op is not differentiable" in r.stderr, r.stderr
