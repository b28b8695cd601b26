# RUN: env TCC_CACHE_DIR=%t %python %s | FileCheck %s
# Tests select_scatter and slice_scatter of unit step: the parts of the base
# around the replaced rows and the source concatenated (no index constant);
# a strided slice_scatter is a scatter at constant positions; a zero base
# too big for a dense constant is still a splat, so that the sum of a
# split's gradients becomes one concatenation (emit="tcc", after the graph
# passes).
import torch


def f(x, a, b, c):
    s = torch.slice_scatter(x, a, 1, 1, 3)
    t = torch.select_scatter(x, b, 2, -1)
    u = torch.slice_scatter(x, a, 1, 0, 4, 2)
    return s, t, u


def grads(a, b, c):
    z = torch.zeros(3, 8, 16)
    return (torch.select_scatter(z, a, 0, 0) + torch.select_scatter(z, b, 0, 1)
            + torch.select_scatter(z, c, 0, 2))


x = torch.randn(3, 4, 5)
args = (x, torch.randn(3, 2, 5), torch.randn(3, 4), None)
compiled = torch.compile(f, backend="tcc", dynamic=False,
                         options={"emit": "import", "fallback": False})
for got, want in zip(compiled(*args), f(*args)):
    assert torch.equal(got, want)

# CHECK-LABEL: module attributes {tcc.model_name = "inference1"}
# CHECK: func.func @main(%[[X:[^:]*]]: tensor<3x4x5xf32> {{.*}}, %[[A:[^:]*]]: tensor<3x2x5xf32> {{.*}}, %[[B:[^:]*]]: tensor<3x4xf32>
# CHECK: %[[L:.*]] = tcc.slice %[[X]] offsets = [0, 0, 0] steps = [1, 1, 1] : tensor<3x4x5xf32> -> tensor<3x1x5xf32>
# CHECK: %[[R:.*]] = tcc.slice %[[X]] offsets = [0, 3, 0] steps = [1, 1, 1] : tensor<3x4x5xf32> -> tensor<3x1x5xf32>
# CHECK: tcc.concat %[[L]], %[[A]], %[[R]] axis = 1
# CHECK-DAG: %[[COL:.*]] = tcc.reshape %[[B]] : tensor<3x4xf32> -> tensor<3x4x1xf32>
# CHECK-DAG: %[[HEAD:.*]] = tcc.slice %[[X]] offsets = [0, 0, 0] steps = [1, 1, 1] : tensor<3x4x5xf32> -> tensor<3x4x4xf32>
# CHECK: tcc.concat %[[HEAD]], %[[COL]] axis = 2
# CHECK: tcc.scatter
# CHECK-SAME: reduction = none

abc = [torch.randn(8, 16) for _ in range(3)]
compiled = torch.compile(grads, backend="tcc", dynamic=False,
                         options={"emit": "tcc", "fallback": False})
assert torch.equal(compiled(*abc), grads(*abc))

# CHECK-LABEL: module attributes {tcc.model_name = "inference2"}
# CHECK: func.func @main(%[[G0:[^:]*]]: tensor<8x16xf32> {{.*}}, %[[G1:[^:]*]]: tensor<8x16xf32> {{.*}}, %[[G2:[^:]*]]: tensor<8x16xf32>
# CHECK-NOT: tcc.add
# CHECK-NOT: tcc.scatter
# CHECK: tcc.concat %{{.*}}, %{{.*}}, %{{.*}} axis = 0 : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>) -> tensor<3x8x16xf32>
# CHECK-NOT: tcc.add
