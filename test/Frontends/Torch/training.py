# RUN: env TCC_CACHE_DIR=%t %python %s | FileCheck %s
# Tests that a training step imports as AOTAutograd's two graphs: the
# forward (parameters as inputs, the saved tanh among its outputs) and the
# backward (tanh' = 1 - y^2, the weight and bias gradients).
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh())
compiled = torch.compile(model, backend="tcc",
                         options={"emit": "import", "fallback": False})
compiled(torch.randn(2, 8)).sum().backward()

# CHECK-LABEL: module attributes {tcc.model_name = "forward1"}
# CHECK: func.func @main(%[[W:.*]]: tensor<4x8xf32> {tcc.name = "primals_1"}, %[[B:.*]]: tensor<4xf32> {tcc.name = "primals_2"}, %[[X:.*]]: tensor<2x8xf32> {tcc.name = "primals_3"})
# CHECK: %[[WT:.*]] = tcc.transpose %[[W]] perm = [1, 0]
# CHECK: %[[M:.*]] = tcc.matmul %[[X]], %[[WT]]
# CHECK: %[[A:.*]] = tcc.add %[[M]], %[[B]]
# CHECK: %[[Y:.*]] = tcc.tanh %[[A]]
# CHECK: return %[[Y]], %[[Y]]

# CHECK-LABEL: module attributes {tcc.model_name = "backward2"}
# CHECK: func.func @main(%[[X:.*]]: tensor<2x8xf32> {tcc.name = "primals_3"}, %[[Y:.*]]: tensor<2x4xf32> {{.*}}, %[[G:.*]]: tensor<2x4xf32> {tcc.name = "tangents_1"}) -> (tensor<4x8xf32> {{.*}}, tensor<4xf32> {{.*}})
# CHECK: %[[ONE:.*]] = tcc.constant dense<1.000000e+00> : tensor<f32>
# CHECK: %[[YY:.*]] = tcc.mul %[[Y]], %[[Y]]
# CHECK: %[[D:.*]] = tcc.sub %[[ONE]], %[[YY]]
# CHECK: %[[GA:.*]] = tcc.mul %[[G]], %[[D]]
# CHECK: tcc.matmul %{{.*}}, %[[X]] : (tensor<4x2xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
# CHECK: tcc.reduce_sum %[[GA]] axes = [0] keepdims
