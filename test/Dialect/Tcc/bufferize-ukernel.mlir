// RUN: tcc-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --split-input-file | FileCheck %s

// Tests that a dense operand is passed as it is, and that a strided one (a
// slice with a step) is staged through a dense copy: the kernels address
// row-major buffers only.
// CHECK-LABEL: func @strided_input
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32{{.*}}>, %[[B:.*]]: memref<8x4xf32{{.*}}>)
// CHECK: %[[S:.*]] = memref.subview %[[A]][0, 0] [2, 8] [2, 1]
// CHECK: %[[D:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK: memref.copy %[[S]], %[[D]]
// CHECK: tcc.ukernel "sgemm" ins(%[[D]], %[[B]] : memref<2x8xf32>, memref<8x4xf32{{.*}}>)
func.func @strided_input(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %s = tensor.extract_slice %a[0, 0] [2, 8] [2, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %r = tcc.ukernel "sgemm" ins(%s, %b : tensor<2x8xf32>, tensor<8x4xf32>) outs(%e : tensor<2x4xf32>) params {} -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// Tests that a strided output is computed into a dense buffer, then copied
// into place after the call.
// CHECK-LABEL: func @strided_output
// CHECK: %[[O:.*]] = memref.subview %{{.*}}[0, 0] [2, 4] [1, 2]
// CHECK: %[[D:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: tcc.ukernel "sgemm" ins(%{{.*}}, %{{.*}} : memref<2x8xf32{{.*}}>, memref<8x4xf32{{.*}}>) outs(%[[D]] : memref<2x4xf32>)
// CHECK-NEXT: memref.copy %[[D]], %[[O]]
func.func @strided_output(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %big: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %o = tensor.extract_slice %big[0, 0] [2, 4] [1, 2] : tensor<2x8xf32> to tensor<2x4xf32>
  %r = tcc.ukernel "sgemm" ins(%a, %b : tensor<2x8xf32>, tensor<8x4xf32>) outs(%o : tensor<2x4xf32>) params {} -> tensor<2x4xf32>
  %w = tensor.insert_slice %r into %big[0, 0] [2, 4] [1, 2] : tensor<2x4xf32> into tensor<2x8xf32>
  return %w : tensor<2x8xf32>
}
