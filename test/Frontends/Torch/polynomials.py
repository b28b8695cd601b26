# RUN: env TCC_CACHE_DIR=%t %python %s | FileCheck %s
# Tests an orthogonal polynomial of a tensor degree: the degree truncated
# toward zero, then the three-term recurrence in one tcc.loop that runs to
# the largest degree present (trip count max(n) - 1), each element taking
# the next term only while its own degree is above the iteration's.
import torch


def f(x, n):
    return torch.special.hermite_polynomial_he(x, n)


compiled = torch.compile(f, backend="tcc", dynamic=False,
                         options={"emit": "import", "fallback": False})
compiled(torch.randn(4), torch.tensor([0.0, 1.0, 2.0, 5.0]))

# CHECK-LABEL: module attributes {tcc.model_name = "inference1"}
# CHECK: func.func @main(%[[X:.*]]: tensor<4xf32> {{.*}}, %[[N:.*]]: tensor<4xf32>
# CHECK-DAG: %[[CEIL:.*]] = tcc.ceil %[[N]]
# CHECK-DAG: %[[FLOOR:.*]] = tcc.floor %[[N]]
# CHECK: %[[TRUNC:.*]] = tcc.select %{{.*}}, %[[CEIL]], %[[FLOOR]]
# CHECK: %[[DEG:.*]] = tcc.select %{{.*}}, %{{.*}}, %[[TRUNC]]
# CHECK: %[[ONES:.*]] = tcc.constant dense<1.000000e+00> : tensor<4xf32>
# CHECK: %[[TOP:.*]] = tcc.reduce_max %[[DEG]] axes = [0] : tensor<4xf32> -> tensor<f32>
# CHECK: %[[TOPI:.*]] = tcc.cast %[[TOP]] : tensor<f32> -> tensor<i64>
# CHECK: %[[LESS:.*]] = tcc.sub %[[TOPI]], %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>
# CHECK: %[[TRIP:.*]] = tcc.max %[[LESS]], %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>
# CHECK: %[[R:.*]]:2 = tcc.loop %[[TRIP]], %{{.*}}, %[[ONES]], %[[X]]
# CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<i64>, %{{.*}}: tensor<i1>, %[[P:.*]]: tensor<4xf32>, %[[Q:.*]]: tensor<4xf32>):
# CHECK: %[[K:.*]] = tcc.cast %{{.*}} : tensor<i64> -> tensor<f32>
# CHECK: %[[ACTIVE:.*]] = tcc.cmp gt, %[[DEG]], %[[K]]
# CHECK: %[[XQ:.*]] = tcc.mul %[[X]], %[[Q]]
# CHECK: %[[KP:.*]] = tcc.mul %[[K]], %[[P]]
# CHECK: %[[NEXT:.*]] = tcc.sub %[[XQ]], %[[KP]]
# CHECK: %[[P2:.*]] = tcc.select %[[ACTIVE]], %[[Q]], %[[P]]
# CHECK: %[[Q2:.*]] = tcc.select %[[ACTIVE]], %[[NEXT]], %[[Q]]
# CHECK: tcc.yield %{{.*}}, %[[P2]], %[[Q2]]
# CHECK: tcc.select %{{.*}}, %[[X]], %[[R]]#1
