// RUN: tcc-opt %s --tcc-copy-results | FileCheck %s

// Tests that results the function does not compute (an argument, a
// constant, a value returned twice) get their own copies, and computed ones
// are left alone, and that the tensor arguments are marked not writable
// (the caller's inputs are never updated in place).
// CHECK-LABEL: func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32> {bufferization.writable = false})
// CHECK: %[[C:.*]] = arith.constant
// CHECK: %[[Y:.*]] = math.exp
// CHECK: %[[A:.*]] = linalg.copy ins(%[[X]] : tensor<4xf32>)
// CHECK: %[[B:.*]] = linalg.copy ins(%[[X]] : tensor<4xf32>)
// CHECK: %[[K:.*]] = linalg.copy ins(%[[C]] : tensor<2xf32>)
// CHECK: %[[Y2:.*]] = linalg.copy ins(%[[Y]] : tensor<4xf32>)
// CHECK: return %[[A]], %[[B]], %[[K]], %[[Y]], %[[Y2]]
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = math.exp %x : tensor<4xf32>
  return %x, %x, %c, %y, %y : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>
}

