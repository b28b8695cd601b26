# RUN: env TCC_CACHE_DIR=%t %python %s import | FileCheck %s --check-prefix=IMPORT
# RUN: env TCC_CACHE_DIR=%t %python %s tcc | FileCheck %s --check-prefix=TCC
# Tests that a convolution and an eval-mode batch norm import as such, with
# the module's weights and running statistics frozen into constants, and
# that the graph-level passes then fold the batch norm into the convolution.
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1),
                            torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
compiled = torch.compile(model, backend="tcc",
                         options={"emit": sys.argv[1], "fallback": False})
with torch.no_grad():
    compiled(torch.randn(1, 3, 8, 8))

# IMPORT-LABEL: module attributes {tcc.model_name = "inference1"}
# IMPORT: func.func @main(%[[X:.*]]: tensor<1x3x8x8xf32>
# IMPORT: %[[C:.*]] = tcc.conv %[[X]], %{{.*}}, %{{.*}} strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1
# IMPORT: %[[N:.*]] = tcc.batch_norm %[[C]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon = 1.000000e-05
# IMPORT: %[[R:.*]] = tcc.relu %[[N]]
# IMPORT: return %[[R]]

# TCC-LABEL: func.func @main
# TCC-NOT: tcc.batch_norm
# TCC: tcc.conv
# TCC-NOT: tcc.batch_norm
# TCC: return
