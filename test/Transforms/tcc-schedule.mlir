// RUN: tcc-opt %s --tcc-schedule | FileCheck %s

// Tests that a value computed early from live-anyway operands (an argument,
// a constant) moves down to just before its first user, and that a chain
// feeding only it moves along, in order.
// CHECK-LABEL: func @attention_like
// CHECK: %[[S:.*]] = tcc.exp %arg0
// CHECK-NEXT: %[[T:.*]] = tcc.exp %[[S]]
// CHECK-NEXT: %[[V:.*]] = tcc.matmul %arg0, %{{.*}}
// CHECK-NEXT: %[[V2:.*]] = tcc.neg %[[V]]
// CHECK-NEXT: %[[O:.*]] = tcc.matmul %[[T]], %[[V2]]
// CHECK-NEXT: return %[[O]]
func.func @attention_like(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %w = tcc.constant dense<1.0> : tensor<8x8xf32>
  %v = tcc.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %v2 = tcc.neg %v : tensor<8x8xf32>
  %s = tcc.exp %x : tensor<8x8xf32>
  %t = tcc.exp %s : tensor<8x8xf32>
  %o = tcc.matmul %t, %v2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// Tests that an op stays where it is when moving it would keep an operand
// alive longer (%a dies at %c, and %c needs it, so it cannot move along),
// or when its first user comes next anyway.
// CHECK-LABEL: func @stays
// CHECK: %[[A:.*]] = tcc.exp %arg0
// CHECK-NEXT: %[[B:.*]] = tcc.neg %[[A]]
// CHECK-NEXT: %[[C:.*]] = tcc.exp %[[A]]
// CHECK-NEXT: %[[D:.*]] = tcc.add %[[C]], %[[B]]
func.func @stays(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = tcc.exp %x : tensor<8xf32>
  %b = tcc.neg %a : tensor<8xf32>
  %c = tcc.exp %a : tensor<8xf32>
  %d = tcc.add %c, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %d : tensor<8xf32>
}
