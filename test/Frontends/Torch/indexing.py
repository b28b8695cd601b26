# RUN: env TCC_CACHE_DIR=%t %python %s | FileCheck %s
# Tests gather, scatter_reduce without include_self and topk: gather and
# scatter address the flattened tensor (the index along `dim` scaled by its
# stride, plus a constant of the other coordinates' offsets), a reduction
# without include_self first writes its identity where updates land, and
# topk is one tcc.topk with both results.
import torch


def f(x, i, src):
    g = torch.gather(x, 1, i)
    s = x.scatter_reduce(1, i, src, "amax", include_self=False)
    v, k = torch.topk(x, 2, dim=1)
    return g, s, v, k


compiled = torch.compile(f, backend="tcc", dynamic=False,
                         options={"emit": "import", "fallback": False})
x = torch.randn(3, 4)
i = torch.tensor([[0, 3], [1, 1], [2, 0]])
compiled(x, i, torch.randn(3, 2))

# CHECK-LABEL: module attributes {tcc.model_name = "inference1"}
# CHECK: func.func @main(%[[X:.*]]: tensor<3x4xf32> {{.*}}, %[[I:.*]]: tensor<3x2xi64> {{.*}}, %[[SRC:.*]]: tensor<3x2xf32>
# CHECK-DAG: %[[ROWS:.*]] = tcc.constant dense<{{\[\[}}0, 0], [4, 4], [8, 8]]> : tensor<3x2xi64>
# CHECK-DAG: %[[FLAT:.*]] = tcc.reshape %[[X]] : tensor<3x4xf32> -> tensor<12xf32>
# CHECK: %[[AT:.*]] = tcc.add %[[I]], %[[ROWS]]
# CHECK: tcc.gather %[[FLAT]], %[[AT]] axis = 0 : (tensor<12xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
# CHECK: %[[NEGINF:.*]] = tcc.constant dense<0xFF800000> : tensor<6xf32>
# CHECK: %[[CLEARED:.*]] = tcc.scatter %{{.*}}, %[[WHERE:.*]], %[[NEGINF]] axis = 0 reduction = none
# CHECK: tcc.scatter %[[CLEARED]], %[[WHERE]], %{{.*}} axis = 0 reduction = max
# CHECK: tcc.topk %[[X]] axis = 1 largest : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
