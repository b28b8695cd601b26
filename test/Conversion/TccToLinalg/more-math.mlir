// RUN: tcc-opt %s --convert-tcc-to-linalg --split-input-file | FileCheck %s

// Tests the scalar bodies of the trigonometric, shift and bit-cast ops.
// CHECK-LABEL: func @math
// CHECK: math.acosh
// CHECK: arith.cmpi ult
// CHECK: arith.shrsi
// CHECK: arith.bitcast %{{.*}} : f32 to i32
func.func @math(%x: tensor<4xf32>, %i: tensor<4xi32>, %s: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = tcc.acosh %x : tensor<4xf32>
  %1 = tcc.shift_right %i, %s : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = tcc.bitcast %x : tensor<4xf32> -> tensor<4xi32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Tests that an integer power is computed by squaring over the exponent's
// bits, a fixed number of steps.
// CHECK-LABEL: func @ipow
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C32]]
// CHECK:   arith.trunci %{{.*}} : i32 to i1
// CHECK:   arith.muli
// CHECK:   arith.shrui
func.func @ipow(%i: tensor<4xi32>, %s: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.pow %i, %s : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
