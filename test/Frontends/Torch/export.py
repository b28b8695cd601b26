# RUN: %python %s %t.so | FileCheck %s
# RUN: test -f %t.so && test -f %t.h
# Tests that torch.export's program imports with its lifted parameters and
# buffers as constants (the model's weights inside the artifact) and the
# user input as the only argument, named after the artifact.
import sys

import torch

import tcc.torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                            torch.nn.Flatten(), torch.nn.Linear(64, 2))
tcc.torch.export(model, (torch.randn(1, 1, 6, 6),), sys.argv[1],
                 emit="import")

# CHECK-LABEL: module attributes {tcc.model_name = "{{.*}}"}
# CHECK: func.func @main(%[[X:.*]]: tensor<1x1x6x6xf32> {tcc.name = "{{.*}}"}) -> (tensor<1x2xf32>
# CHECK-NOT: %arg1
# CHECK: tcc.constant dense{{.*}} : tensor<4x1x3x3xf32>
# CHECK: %[[C:.*]] = tcc.conv %[[X]]
# CHECK: tcc.batch_norm %[[C]]
# CHECK: tcc.matmul
# CHECK: return
