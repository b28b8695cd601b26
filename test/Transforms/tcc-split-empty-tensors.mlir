// RUN: tcc-opt %s --tcc-split-empty-tensors | FileCheck %s

// Tests that each use of a tensor.empty gets its own, next to the
// original and in the order of the uses, and that a single use is left
// alone.
// CHECK-LABEL: func @shared
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NOT: tensor.empty
// CHECK: %[[A:.*]] = linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK: %[[B:.*]] = linalg.negf ins(%[[A]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[E2]])
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %e) -> (tensor<4xf32>) {
    %s = tensor.extract_slice %b[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %u = tensor.insert_slice %s into %acc[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  return %a, %r : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func @single
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
