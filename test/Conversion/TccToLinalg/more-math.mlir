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
// bits, a fixed number of steps, and that a negative exponent gives 1 for a
// base of 1, +-1 for -1 (by its parity) and 0 otherwise.
// CHECK-LABEL: func @ipow
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[POW:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[C32]]
// CHECK:   arith.trunci %{{.*}} : i32 to i1
// CHECK:   arith.muli
// CHECK:   arith.shrui
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[E:.*]], %{{.*}} : i32
// CHECK: %[[ODD:.*]] = arith.trunci %[[E]] : i32 to i1
// CHECK: %[[PM:.*]] = arith.select %[[ODD]]
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[B:.*]], %{{.*}} : i32
// CHECK: %[[MONE:.*]] = arith.cmpi eq, %[[B]], %{{.*}} : i32
// CHECK: %[[IN:.*]] = arith.select %[[MONE]], %[[PM]]
// CHECK: %[[INV:.*]] = arith.select %[[ONE]], %{{.*}}, %[[IN]]
// CHECK: arith.select %[[NEG]], %[[INV]], %[[POW]]#0
func.func @ipow(%i: tensor<4xi32>, %s: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.pow %i, %s : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
