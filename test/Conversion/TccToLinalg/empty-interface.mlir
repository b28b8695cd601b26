// RUN: tcc-opt %s --convert-tcc-to-linalg | FileCheck %s

// Tests that zero-element tensors at the function boundary get one element:
// the input is replaced inside by an empty tensor, the output by a fresh
// allocation that is never written; other arguments stay as they are.
// CHECK-LABEL: func @empty
// CHECK-SAME: (%{{.*}}: tensor<1xf32>, %[[Y:.*]]: tensor<2xf32>) -> (tensor<1xf32>, tensor<2xf32>)
// CHECK: tensor.empty() : tensor<0x3xf32>
// CHECK: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<1xf32>
// CHECK: return %[[OUT]], %[[Y]]
func.func @empty(%x: tensor<0x3xf32>, %y: tensor<2xf32>) -> (tensor<2x0xf32>, tensor<2xf32>) {
  %0 = tcc.reshape %x : tensor<0x3xf32> -> tensor<2x0xf32>
  return %0, %y : tensor<2x0xf32>, tensor<2xf32>
}
