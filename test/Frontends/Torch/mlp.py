# RUN: env TCC_CACHE_DIR=%t %python %s | FileCheck %s
# Tests that an inference graph's linear layers import as matmuls against
# the frozen, transposed weights (a weight of at most 4096 elements
# transposed into a constant at import: small blobs fold), with the bias
# added and ReLU between.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 4)).eval()
compiled = torch.compile(model, backend="tcc",
                         options={"emit": "import", "fallback": False})
with torch.no_grad():
    compiled(torch.randn(2, 64))

# CHECK-LABEL: module attributes {tcc.model_name = "inference1"}
# CHECK: func.func @main(%[[X:.*]]: tensor<2x64xf32> {tcc.name = "arg{{[0-9]+}}_1"}) -> (tensor<2x4xf32> {tcc.name = "addmm_1"})
# CHECK-DAG: %[[B1:.*]] = tcc.constant dense<{{.*}}> : tensor<32xf32>
# CHECK-DAG: %[[T1:.*]] = tcc.constant dense<{{.*}}> : tensor<64x32xf32>
# CHECK-NOT: tcc.transpose
# CHECK: %[[M1:.*]] = tcc.matmul %[[X]], %[[T1]] : (tensor<2x64xf32>, tensor<64x32xf32>) -> tensor<2x32xf32>
# CHECK: %[[A1:.*]] = tcc.add %[[M1]], %[[B1]]
# CHECK: %[[R:.*]] = tcc.relu %[[A1]] : tensor<2x32xf32>
# CHECK: %[[M2:.*]] = tcc.matmul %[[R]], %{{.*}} : (tensor<2x32xf32>, tensor<32x4xf32>) -> tensor<2x4xf32>
# CHECK: %[[Y:.*]] = tcc.add %[[M2]], %{{.*}}
# CHECK: return %[[Y]] : tensor<2x4xf32>
