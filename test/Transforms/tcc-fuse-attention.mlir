// RUN: tcc-opt %s --tcc-fuse-attention --split-input-file | FileCheck %s

// Tests that attention's three kernels as tcc-fuse leaves them (the scores'
// product of two head views, the scaled softmax, the product with V and the
// views back to rows) become one "attention" group: its inputs those of the
// three but the scores and the probabilities, its body theirs in order.
// CHECK-LABEL: func @heads
// CHECK: %[[A:.*]] = tcc.fused "attention"(%arg0, %arg1, %{{.*}}, %arg2 : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<f32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
// CHECK: %[[S:.*]] = tcc.matmul
// CHECK: tcc.div %[[S]], %{{.*}} : (tensor<1x2x8x8xf32>, tensor<f32>)
// CHECK: tcc.reduce_max
// CHECK: tcc.exp
// CHECK: tcc.reduce_sum
// CHECK: %[[P:.*]] = tcc.div
// CHECK: tcc.matmul %[[P]], %{{.*}} : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>)
// CHECK: tcc.yield
// CHECK-NOT: tcc.fused
// CHECK: return %[[A]]
func.func @heads(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>, %v: tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
  %c = tcc.constant dense<2.0> : tensor<f32>
  %s = tcc.fused "contraction"(%q, %k : tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x2x8x8xf32> {
  ^bb0(%a0: tensor<1x8x8xf32>, %a1: tensor<1x8x8xf32>):
    %0 = tcc.reshape %a0 : tensor<1x8x8xf32> -> tensor<1x8x2x4xf32>
    %1 = tcc.transpose %0 perm = [0, 2, 1, 3] : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
    %2 = tcc.reshape %a1 : tensor<1x8x8xf32> -> tensor<1x8x2x4xf32>
    %3 = tcc.transpose %2 perm = [0, 2, 3, 1] : tensor<1x8x2x4xf32> -> tensor<1x2x4x8xf32>
    %4 = tcc.matmul %1, %3 : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
    tcc.yield %4 : tensor<1x2x8x8xf32>
  }
  %p = tcc.fused "rows"(%s, %c : tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32> {
  ^bb0(%a0: tensor<1x2x8x8xf32>, %a1: tensor<f32>):
    %0 = tcc.div %a0, %a1 : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
    %1 = tcc.reduce_max %0 axes = [3] keepdims : tensor<1x2x8x8xf32> -> tensor<1x2x8x1xf32>
    %2 = tcc.sub %0, %1 : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x8xf32>
    %3 = tcc.exp %2 : tensor<1x2x8x8xf32>
    %4 = tcc.reduce_sum %3 axes = [3] keepdims : tensor<1x2x8x8xf32> -> tensor<1x2x8x1xf32>
    %5 = tcc.div %3, %4 : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x8xf32>
    tcc.yield %5 : tensor<1x2x8x8xf32>
  }
  %o = tcc.fused "contraction"(%v, %p : tensor<1x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x8x8xf32> {
  ^bb0(%a0: tensor<1x8x8xf32>, %a1: tensor<1x2x8x8xf32>):
    %0 = tcc.reshape %a0 : tensor<1x8x8xf32> -> tensor<1x8x2x4xf32>
    %1 = tcc.transpose %0 perm = [0, 2, 1, 3] : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
    %2 = tcc.matmul %a1, %1 : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
    %3 = tcc.transpose %2 perm = [0, 2, 1, 3] : tensor<1x2x8x4xf32> -> tensor<1x8x2x4xf32>
    %4 = tcc.reshape %3 : tensor<1x8x2x4xf32> -> tensor<1x8x8xf32>
    tcc.yield %4 : tensor<1x8x8xf32>
  }
  return %o : tensor<1x8x8xf32>
}

// -----

// Tests that a decoder's causal mask (a boolean mask selecting a constant
// -inf) joins the group, the mask an input of it.
// CHECK-LABEL: func @causal
// CHECK: tcc.fused "attention"(%arg0, %arg1, %arg3, %{{.*}}, %arg2 : tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x8xi1>, tensor<f32>, tensor<8x4xf32>)
// CHECK: tcc.select
// CHECK-NOT: tcc.fused
func.func @causal(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>, %m: tensor<8x8xi1>) -> tensor<8x4xf32> {
  %inf = tcc.constant dense<0xFF800000> : tensor<f32>
  %s = tcc.fused "contraction"(%q, %kt : tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a0: tensor<8x4xf32>, %a1: tensor<4x8xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    tcc.yield %0 : tensor<8x8xf32>
  }
  %p = tcc.fused "rows"(%s, %m, %inf : tensor<8x8xf32>, tensor<8x8xi1>, tensor<f32>) -> tensor<8x8xf32> {
  ^bb0(%a0: tensor<8x8xf32>, %a1: tensor<8x8xi1>, %a2: tensor<f32>):
    %0 = tcc.select %a1, %a2, %a0 : (tensor<8x8xi1>, tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = tcc.reduce_max %0 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %2 = tcc.sub %0, %1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %3 = tcc.exp %2 : tensor<8x8xf32>
    %4 = tcc.reduce_sum %3 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %5 = tcc.div %3, %4 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    tcc.yield %5 : tensor<8x8xf32>
  }
  %o = tcc.fused "contraction"(%p, %v : tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x8xf32>, %a1: tensor<8x4xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %0 : tensor<8x4xf32>
  }
  return %o : tensor<8x4xf32>
}

// -----

// Tests that nothing merges when the scores are used again (they must reach
// memory anyway), when the scale is not a constant (the kernel takes it as
// a number), or when the rows group is not a softmax.
// CHECK-LABEL: func @kept
// CHECK-COUNT-3: tcc.fused "contraction"
// CHECK-NOT: "attention"
func.func @kept(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>, %c: tensor<f32>) -> (tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x4xf32>) {
  %s = tcc.fused "contraction"(%q, %kt : tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a0: tensor<8x4xf32>, %a1: tensor<4x8xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    tcc.yield %0 : tensor<8x8xf32>
  }
  %p = tcc.fused "rows"(%s, %c : tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32> {
  ^bb0(%a0: tensor<8x8xf32>, %a1: tensor<f32>):
    %0 = tcc.mul %a0, %a1 : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1 = tcc.reduce_max %0 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %2 = tcc.sub %0, %1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %3 = tcc.exp %2 : tensor<8x8xf32>
    %4 = tcc.reduce_sum %3 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %5 = tcc.div %3, %4 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    tcc.yield %5 : tensor<8x8xf32>
  }
  %o = tcc.fused "contraction"(%p, %v : tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x8xf32>, %a1: tensor<8x4xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %0 : tensor<8x4xf32>
  }
  %n = tcc.fused "rows"(%s : tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a0: tensor<8x8xf32>):
    %0 = tcc.reduce_max %a0 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %1 = tcc.sub %a0, %0 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    tcc.yield %1 : tensor<8x8xf32>
  }
  %o2 = tcc.fused "contraction"(%n, %v : tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x8xf32>, %a1: tensor<8x4xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %0 : tensor<8x4xf32>
  }
  return %o, %s, %o2 : tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x4xf32>
}

// -----

// Tests that a product left out of any group because its operands are each
// scaled by a constant first (an exporter's Q and K times d^-1/4) joins the
// group with those multiplies and its views, and that nothing changes when
// the rest does not merge (the product's scale is not a constant).
// CHECK-LABEL: func @scaled_operands
// CHECK: tcc.fused "attention"(%arg0, %{{.*}}, %arg1, %arg2 : tensor<8x4xf32>, tensor<1xf32>, tensor<4x8xf32>, tensor<8x4xf32>)
// CHECK: tcc.mul
// CHECK: tcc.mul
// CHECK: tcc.matmul
// CHECK-NOT: tcc.fused
func.func @scaled_operands(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %c = tcc.constant dense<0.5> : tensor<1xf32>
  %qs = tcc.mul %q, %c : (tensor<8x4xf32>, tensor<1xf32>) -> tensor<8x4xf32>
  %ks = tcc.mul %kt, %c : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %s = tcc.matmul %qs, %ks : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %p = tcc.fused "rows"(%s : tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a0: tensor<8x8xf32>):
    %1 = tcc.reduce_max %a0 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %2 = tcc.sub %a0, %1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %3 = tcc.exp %2 : tensor<8x8xf32>
    %4 = tcc.reduce_sum %3 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %5 = tcc.div %3, %4 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    tcc.yield %5 : tensor<8x8xf32>
  }
  %o = tcc.fused "contraction"(%p, %v : tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x8xf32>, %a1: tensor<8x4xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %0 : tensor<8x4xf32>
  }
  return %o : tensor<8x4xf32>
}

// CHECK-LABEL: func @scaled_not_merged
// CHECK: tcc.mul %arg0, %arg3
// CHECK-NEXT: tcc.matmul
// CHECK-NEXT: tcc.fused "rows"
func.func @scaled_not_merged(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>, %c: tensor<1xf32>) -> tensor<8x4xf32> {
  %k = tcc.constant dense<0.5> : tensor<1xf32>
  %qs = tcc.mul %q, %c : (tensor<8x4xf32>, tensor<1xf32>) -> tensor<8x4xf32>
  %s = tcc.matmul %qs, %kt : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %p = tcc.fused "rows"(%s : tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a0: tensor<8x8xf32>):
    %1 = tcc.reduce_max %a0 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %2 = tcc.sub %a0, %1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %3 = tcc.exp %2 : tensor<8x8xf32>
    %4 = tcc.reduce_sum %3 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %5 = tcc.div %3, %4 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    tcc.yield %5 : tensor<8x8xf32>
  }
  %o = tcc.fused "contraction"(%p, %v : tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x8xf32>, %a1: tensor<8x4xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %0 : tensor<8x4xf32>
  }
  return %o : tensor<8x4xf32>
}
