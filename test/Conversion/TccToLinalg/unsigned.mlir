// RUN: tcc-opt %s --convert-tcc-to-linalg --split-input-file | FileCheck %s

// Tests that unsigned integers become signless (the function's signature
// too) and that the ops whose meaning depends on signedness use unsigned
// arithmetic; integer division never traps on zero.
// CHECK-LABEL: func @unsigned
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi1>, tensor<4xf32>)
// CHECK: arith.select
// CHECK: arith.divui
// CHECK: arith.cmpi ult
// CHECK: arith.uitofp
// CHECK-NOT: ui8
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>) {
  %0 = tcc.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = tcc.cmp lt, %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %2 = tcc.cast %a : tensor<4xui8> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>
}

// -----

// Tests that an unsigned reduction starts from the unsigned extreme and
// compares as unsigned, and that unsigned constants keep their bits.
// CHECK-LABEL: func @unsigned_max
// CHECK: arith.constant dense<[-56, 1]> : tensor<2xi8>
// CHECK: arith.constant 0 : i16
// CHECK: arith.maxui
func.func @unsigned_max(%a: tensor<2x3xui16>) -> (tensor<2xui8>, tensor<2xui16>) {
  %c = tcc.constant dense<[200, 1]> : tensor<2xui8>
  %0 = tcc.reduce_max %a axes = [1] : tensor<2x3xui16> -> tensor<2xui16>
  return %c, %0 : tensor<2xui8>, tensor<2xui16>
}
