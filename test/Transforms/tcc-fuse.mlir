// RUN: tcc-opt %s --tcc-fuse --split-input-file | FileCheck %s

// Tests that an elementwise chain over one shape becomes one group, with
// the broadcast bias as a group input.
// CHECK-LABEL: func @bias_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[F:.*]] = tcc.fused "elementwise"(%[[X]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK: ^bb0(%[[A0:.*]]: tensor<4x8xf32>, %[[A1:.*]]: tensor<8xf32>):
// CHECK:   %[[S:.*]] = tcc.add %[[A0]], %[[A1]]
// CHECK:   %[[G:.*]] = tcc.gelu %[[S]]
// CHECK:   tcc.yield %[[G]] : tensor<4x8xf32>
// CHECK: return %[[F]]
func.func @bias_gelu(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tcc.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = tcc.gelu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Tests that a decomposed softmax (two row reductions and the elementwise
// ops around them) becomes one "rows" group.
// CHECK-LABEL: func @softmax
// CHECK: %[[F:.*]] = tcc.fused "rows"(%{{.*}} : tensor<2x10xf32>) -> tensor<2x10xf32> {
// CHECK:   tcc.reduce_max
// CHECK:   tcc.sub
// CHECK:   tcc.exp
// CHECK:   tcc.reduce_sum
// CHECK:   tcc.div
// CHECK:   tcc.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %m = tcc.reduce_max %x axes = [1] keepdims : tensor<2x10xf32> -> tensor<2x1xf32>
  %d = tcc.sub %x, %m : (tensor<2x10xf32>, tensor<2x1xf32>) -> tensor<2x10xf32>
  %e = tcc.exp %d : tensor<2x10xf32>
  %s = tcc.reduce_sum %e axes = [1] keepdims : tensor<2x10xf32> -> tensor<2x1xf32>
  %r = tcc.div %e, %s : (tensor<2x10xf32>, tensor<2x1xf32>) -> tensor<2x10xf32>
  return %r : tensor<2x10xf32>
}

// -----

// Tests that a decomposed layer norm, whose row statistics feed ops on the
// reduced shape (add epsilon, rsqrt), becomes one "rows" group.
// CHECK-LABEL: func @layer_norm
// CHECK: tcc.fused "rows"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x16xf32>, tensor<f32>, tensor<16xf32>, tensor<16xf32>) -> tensor<3x16xf32>
// CHECK-COUNT-2: tcc.reduce_mean
// CHECK: tcc.rsqrt
// CHECK: tcc.yield
// CHECK-NOT: tcc.
// CHECK: return
func.func @layer_norm(%x: tensor<3x16xf32>, %eps: tensor<f32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<3x16xf32> {
  %mean = tcc.reduce_mean %x axes = [1] keepdims : tensor<3x16xf32> -> tensor<3x1xf32>
  %c = tcc.sub %x, %mean : (tensor<3x16xf32>, tensor<3x1xf32>) -> tensor<3x16xf32>
  %sq = tcc.mul %c, %c : (tensor<3x16xf32>, tensor<3x16xf32>) -> tensor<3x16xf32>
  %var = tcc.reduce_mean %sq axes = [1] keepdims : tensor<3x16xf32> -> tensor<3x1xf32>
  %ve = tcc.add %var, %eps : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %inv = tcc.rsqrt %ve : tensor<3x1xf32>
  %n = tcc.mul %c, %inv : (tensor<3x16xf32>, tensor<3x1xf32>) -> tensor<3x16xf32>
  %s = tcc.mul %n, %g : (tensor<3x16xf32>, tensor<16xf32>) -> tensor<3x16xf32>
  %r = tcc.add %s, %b : (tensor<3x16xf32>, tensor<16xf32>) -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// Tests that a producer whose result is also used outside stays out of the
// group (it would otherwise be computed twice), and that ops over another
// shape do not join.
// CHECK-LABEL: func @boundaries
// CHECK: %[[E:.*]] = tcc.exp %{{.*}} : tensor<4xf32>
// CHECK: %[[F:.*]] = tcc.fused "elementwise"(%[[E]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK:   tcc.neg
// CHECK:   tcc.abs
// CHECK: %[[B:.*]] = tcc.broadcast_to
// CHECK: tcc.relu %[[B]]
// CHECK: return %[[F]], %[[E]]
func.func @boundaries(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>) {
  %e = tcc.exp %x : tensor<4xf32>
  %n = tcc.neg %e : tensor<4xf32>
  %a = tcc.abs %n : tensor<4xf32>
  %b = tcc.broadcast_to %a : tensor<4xf32> -> tensor<2x4xf32>
  %r = tcc.relu %b : tensor<2x4xf32>
  return %a, %e, %r : tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>
}

// -----

// Tests that a convolution takes its residual add and relu along (what the
// kernel's epilogue computes), and a matmul its bias add, but not an op the
// epilogue cannot do.
// CHECK-LABEL: func @contractions
// CHECK: %[[C:.*]] = tcc.fused "contraction"(%{{.*}} : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK:   tcc.conv
// CHECK:   tcc.add
// CHECK:   tcc.relu
// CHECK: %[[M:.*]] = tcc.fused "contraction"
// CHECK:   tcc.matmul
// CHECK:   tcc.add
// CHECK-NOT: tcc.exp
// CHECK: }
// CHECK: tcc.exp %[[M]]
func.func @contractions(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %r: tensor<1x2x4x4xf32>, %a: tensor<3x5xf32>, %b: tensor<5x7xf32>, %bias: tensor<7xf32>) -> (tensor<1x2x4x4xf32>, tensor<3x7xf32>) {
  %0 = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = tcc.add %0, %r : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = tcc.relu %1 : tensor<1x2x4x4xf32>
  %3 = tcc.matmul %a, %b : (tensor<3x5xf32>, tensor<5x7xf32>) -> tensor<3x7xf32>
  %4 = tcc.add %3, %bias : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3x7xf32>
  %5 = tcc.exp %4 : tensor<3x7xf32>
  return %2, %5 : tensor<1x2x4x4xf32>, tensor<3x7xf32>
}

// -----

// Tests that a depthwise convolution (with its bias and relu6) takes the
// 1x1 convolution after it, with that one's bias and residual: one
// contraction group, one kernel.
// CHECK-LABEL: func @depthwise_pointwise
// CHECK: %[[G:.*]] = tcc.fused "contraction"
// CHECK:   tcc.conv {{.*}} groups = 4
// CHECK:   tcc.add
// CHECK:   tcc.clamp
// CHECK:   tcc.conv {{.*}} groups = 1
// CHECK:   tcc.add
// CHECK:   tcc.add
// CHECK:   tcc.yield
// CHECK-NOT: tcc.fused
// CHECK: return %[[G]]
func.func @depthwise_pointwise(%x: tensor<1x4x6x6xf32>, %dw: tensor<4x1x3x3xf32>, %db: tensor<1x4x1x1xf32>, %pw: tensor<8x4x1x1xf32>, %pb: tensor<1x8x1x1xf32>, %r: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %0 = tcc.conv %x, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = tcc.add %0, %db : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %2 = tcc.clamp %1 min = 0.0 max = 6.0 : tensor<1x4x6x6xf32>
  %3 = tcc.conv %2, %pw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  %4 = tcc.add %3, %pb : (tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %5 = tcc.add %4, %r : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %5 : tensor<1x8x6x6xf32>
}

// -----

// Tests that an expanding 1x1 convolution (bias, relu6) takes the
// depthwise/pointwise pair after it: one contraction group of three
// convolutions (mobilenet_v2's inverted-residual block).
// CHECK-LABEL: func @expansion_depthwise_pointwise
// CHECK: %[[G:.*]] = tcc.fused "contraction"
// CHECK:   tcc.conv {{.*}} groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>)
// CHECK:   tcc.add
// CHECK:   tcc.clamp
// CHECK:   tcc.conv {{.*}} groups = 6
// CHECK:   tcc.relu
// CHECK:   tcc.conv {{.*}} groups = 1 : (tensor<1x6x3x3xf32>, tensor<4x6x1x1xf32>)
// CHECK:   tcc.yield
// CHECK-NOT: tcc.fused
// CHECK: return %[[G]]
func.func @expansion_depthwise_pointwise(%x: tensor<1x3x6x6xf32>, %ew: tensor<6x3x1x1xf32>, %eb: tensor<1x6x1x1xf32>, %dw: tensor<6x1x3x3xf32>, %pw: tensor<4x6x1x1xf32>) -> tensor<1x4x3x3xf32> {
  %0 = tcc.conv %x, %ew strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>) -> tensor<1x6x6x6xf32>
  %1 = tcc.add %0, %eb : (tensor<1x6x6x6xf32>, tensor<1x6x1x1xf32>) -> tensor<1x6x6x6xf32>
  %2 = tcc.clamp %1 min = 0.0 max = 6.0 : tensor<1x6x6x6xf32>
  %3 = tcc.conv %2, %dw strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 6 : (tensor<1x6x6x6xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x3x3xf32>
  %4 = tcc.relu %3 : tensor<1x6x3x3xf32>
  %5 = tcc.conv %4, %pw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x6x3x3xf32>, tensor<4x6x1x1xf32>) -> tensor<1x4x3x3xf32>
  return %5 : tensor<1x4x3x3xf32>
}

// -----

// Tests that a stem (a 3x3 stride-2 convolution with one group, relu6)
// takes the pair after it too.
// CHECK-LABEL: func @stem_depthwise_pointwise
// CHECK: %[[G:.*]] = tcc.fused "contraction"
// CHECK:   tcc.conv {{.*}} strides = [2, 2] {{.*}} groups = 1
// CHECK:   tcc.clamp
// CHECK:   tcc.conv {{.*}} groups = 4
// CHECK:   tcc.conv {{.*}} groups = 1
// CHECK:   tcc.yield
// CHECK-NOT: tcc.fused
// CHECK: return %[[G]]
func.func @stem_depthwise_pointwise(%x: tensor<1x3x8x8xf32>, %sw: tensor<4x3x3x3xf32>, %dw: tensor<4x1x3x3xf32>, %pw: tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tcc.conv %x, %sw strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %1 = tcc.clamp %0 min = 0.0 max = 6.0 : tensor<1x4x4x4xf32>
  %2 = tcc.conv %1, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %3 = tcc.conv %2, %pw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x4x4xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %3 : tensor<1x2x4x4xf32>
}

// -----

// Tests what the expansion does not take: an expansion read twice, one
// with a residual, and one whose depthwise convolution has no 1x1 after
// it. Each pair still forms.
// CHECK-LABEL: func @expansion_kept_apart
// CHECK: %[[E:.*]] = tcc.conv %{{.*}}, %{{.*}} {{.*}} groups = 1
// CHECK: tcc.fused "contraction"(%[[E]]
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tcc.conv {{.*}} groups = 6
// CHECK: %[[R:.*]] = tcc.fused "contraction"
// CHECK:   tcc.conv {{.*}} groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>)
// CHECK:   tcc.add
// CHECK-NOT: tcc.conv
// CHECK:   tcc.yield
// CHECK: tcc.fused "contraction"(%[[R]]
// CHECK: %[[L:.*]] = tcc.fused "contraction"
// CHECK:   tcc.conv {{.*}} groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>)
// CHECK:   tcc.relu
// CHECK-NOT: tcc.conv
// CHECK:   tcc.yield
// CHECK: tcc.conv %[[L]], {{.*}} groups = 6
func.func @expansion_kept_apart(%x: tensor<1x3x6x6xf32>, %ew: tensor<6x3x1x1xf32>, %dw: tensor<6x1x3x3xf32>, %pw: tensor<4x6x1x1xf32>, %r: tensor<1x6x6x6xf32>) -> (tensor<1x6x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x6x6x6xf32>) {
  %0 = tcc.conv %x, %ew strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>) -> tensor<1x6x6x6xf32>
  %1 = tcc.conv %0, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 6 : (tensor<1x6x6x6xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  %2 = tcc.conv %1, %pw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x6x6x6xf32>, tensor<4x6x1x1xf32>) -> tensor<1x4x6x6xf32>
  %3 = tcc.conv %x, %ew strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>) -> tensor<1x6x6x6xf32>
  %4 = tcc.add %3, %r : (tensor<1x6x6x6xf32>, tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  %5 = tcc.conv %4, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 6 : (tensor<1x6x6x6xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  %6 = tcc.conv %5, %pw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x6x6x6xf32>, tensor<4x6x1x1xf32>) -> tensor<1x4x6x6xf32>
  %7 = tcc.conv %x, %ew strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>) -> tensor<1x6x6x6xf32>
  %8 = tcc.relu %7 : tensor<1x6x6x6xf32>
  %9 = tcc.conv %8, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 6 : (tensor<1x6x6x6xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0, %2, %6, %9 : tensor<1x6x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x6x6x6xf32>
}

// -----

// Tests what stays two groups: a depthwise output read twice, and a 1x1
// convolution with a stride (the kernel reads every pixel).
// CHECK-LABEL: func @depthwise_pointwise_kept_apart
// CHECK: %[[A:.*]] = tcc.fused "contraction"
// CHECK:   tcc.relu
// CHECK: tcc.conv %[[A]], %{{.*}} strides = [1, 1]
// CHECK: %[[B:.*]] = tcc.fused "contraction"
// CHECK:   tcc.relu
// CHECK: tcc.conv %[[B]], %{{.*}} strides = [2, 2]
func.func @depthwise_pointwise_kept_apart(%x: tensor<1x4x6x6xf32>, %dw: tensor<4x1x3x3xf32>, %pw: tensor<8x4x1x1xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x8x3x3xf32>) {
  %0 = tcc.conv %x, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = tcc.relu %0 : tensor<1x4x6x6xf32>
  %2 = tcc.conv %1, %pw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  %3 = tcc.conv %x, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %4 = tcc.relu %3 : tensor<1x4x6x6xf32>
  %5 = tcc.conv %4, %pw strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  return %2, %1, %5 : tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x8x3x3xf32>
}

// -----

// Tests that a matmul and a convolution each take their bias add and the
// GELU after it (the kernel's activation).
// CHECK-LABEL: func @gelu_epilogue
// CHECK: tcc.fused "contraction"
// CHECK:   tcc.matmul
// CHECK:   tcc.add
// CHECK:   tcc.gelu
// CHECK:   tcc.yield
// CHECK: tcc.fused "contraction"
// CHECK:   tcc.conv
// CHECK:   tcc.gelu
// CHECK:   tcc.yield
func.func @gelu_epilogue(%a: tensor<3x5xf32>, %b: tensor<5x7xf32>, %bias: tensor<7xf32>, %x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<3x7xf32>, tensor<1x2x4x4xf32>) {
  %0 = tcc.matmul %a, %b : (tensor<3x5xf32>, tensor<5x7xf32>) -> tensor<3x7xf32>
  %1 = tcc.add %0, %bias : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3x7xf32>
  %2 = tcc.gelu %1 : tensor<3x7xf32>
  %3 = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = tcc.gelu %3 : tensor<1x2x4x4xf32>
  return %2, %4 : tensor<3x7xf32>, tensor<1x2x4x4xf32>
}

// -----

// Tests that a convolution takes SiLU, x * sigmoid(x), after its bias (the
// product's operands in either order), and hard swish, x * clamp(x * (1/6)
// + 1/2, 0, 1), with its constants left outside as the group's inputs.
// CHECK-LABEL: func @gated_activations
// CHECK: tcc.fused "contraction"
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tcc.conv
// CHECK-NEXT:   tcc.add
// CHECK-NEXT:   tcc.sigmoid
// CHECK-NEXT:   tcc.mul
// CHECK-NEXT:   tcc.yield
// CHECK: tcc.fused "contraction"
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tcc.conv
// CHECK-NEXT:   tcc.mul
// CHECK-NEXT:   tcc.add
// CHECK-NEXT:   tcc.clamp
// CHECK-NEXT:   tcc.mul
// CHECK-NEXT:   tcc.yield
func.func @gated_activations(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %sixth = tcc.constant dense<0.166666672> : tensor<f32>
  %half = tcc.constant dense<5.000000e-01> : tensor<f32>
  %0 = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = tcc.add %0, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = tcc.sigmoid %1 : tensor<1x2x4x4xf32>
  %3 = tcc.mul %2, %1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %5 = tcc.mul %4, %sixth : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %6 = tcc.add %5, %half : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %7 = tcc.clamp %6 min = 0.000000e+00 max = 1.000000e+00 : tensor<1x2x4x4xf32>
  %8 = tcc.mul %4, %7 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %3, %8 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Tests what is not a gated activation and stays elementwise: a SiLU whose
// input has a third user, a hard sigmoid with ONNX's default slope (0.2)
// times x, and a SiLU after a depthwise convolution, which also keeps the
// 1x1 after it out of the depthwise convolution's kernel (the pair's kernel
// has no activation for its depthwise part).
// CHECK-LABEL: func @not_gated
// CHECK: %[[C0:.*]] = tcc.conv
// CHECK: tcc.fused "elementwise"(%[[C0]]
// CHECK: %[[C1:.*]] = tcc.conv
// CHECK: tcc.fused "elementwise"(%[[C1]]
// CHECK: tcc.fused "contraction"
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tcc.conv {{.*}} groups = 4
// CHECK-NEXT:   tcc.sigmoid
// CHECK-NEXT:   tcc.mul
// CHECK-NEXT:   tcc.yield
// CHECK: tcc.conv {{.*}} groups = 1
func.func @not_gated(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %y: tensor<1x4x6x6xf32>, %dw: tensor<4x1x3x3xf32>, %pw: tensor<8x4x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x8x6x6xf32>) {
  %fifth = tcc.constant dense<2.000000e-01> : tensor<f32>
  %half = tcc.constant dense<5.000000e-01> : tensor<f32>
  %0 = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = tcc.sigmoid %0 : tensor<1x2x4x4xf32>
  %2 = tcc.mul %0, %1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = tcc.mul %3, %fifth : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %5 = tcc.add %4, %half : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %6 = tcc.clamp %5 min = 0.000000e+00 max = 1.000000e+00 : tensor<1x2x4x4xf32>
  %7 = tcc.mul %3, %6 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %8 = tcc.conv %y, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %9 = tcc.sigmoid %8 : tensor<1x4x6x6xf32>
  %10 = tcc.mul %8, %9 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %11 = tcc.conv %10, %pw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  return %2, %0, %7, %11 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x8x6x6xf32>
}

// -----

// Tests that a max pooling that alone reads a convolution's output after
// its bias and relu joins the convolution's group (the kernels pool a 2x2 in
// registers or a stem's window by bands of rows where they can), a 2x2 or
// one in ceil mode alike, and that one after an activation or a dilated one
// stays out.
// CHECK-LABEL: func @conv_pool
// CHECK: %[[G:.*]] = tcc.fused "contraction"(%arg0, %{{.*}}, %{{.*}} : tensor<2x1x8x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
// CHECK: tcc.conv
// CHECK: tcc.relu
// CHECK: %[[P:.*]] = tcc.max_pool
// CHECK: tcc.yield %[[P]] : tensor<2x8x4x4xf32>
// CHECK: tcc.fused "contraction"{{.*}} -> tensor<2x8x8x8xf32>
// CHECK-NOT: tcc.max_pool
// CHECK: tcc.yield
// CHECK: tcc.max_pool %{{.*}} kernel = [2, 2] strides = [1, 1]
// CHECK: tcc.fused "contraction"{{.*}} -> tensor<2x8x4x4xf32>
// CHECK: %[[C:.*]] = tcc.max_pool %{{.*}} kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] ceil_mode
// CHECK: tcc.yield %[[C]]
// CHECK-NOT: tcc.yield
// CHECK: tcc.max_pool %{{.*}} kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [2, 2]
func.func @conv_pool(%x: tensor<2x1x8x8xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x8x7x7xf32>, tensor<2x8x4x4xf32>, tensor<2x8x3x3xf32>) {
  %w = tcc.constant dense<0.5> : tensor<8x1x3x3xf32>
  %b = tcc.constant dense<0.25> : tensor<8xf32>
  %c = tcc.conv %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<2x1x8x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %r = tcc.relu %c : tensor<2x8x8x8xf32>
  %p = tcc.max_pool %r kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x8x8x8xf32> -> tensor<2x8x4x4xf32>
  %c2 = tcc.conv %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<2x1x8x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %g = tcc.gelu %c2 : tensor<2x8x8x8xf32>
  %p2 = tcc.max_pool %g kernel = [2, 2] strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x8x8x8xf32> -> tensor<2x8x7x7xf32>
  %c3 = tcc.conv %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<2x1x8x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %p3 = tcc.max_pool %c3 kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<2x8x8x8xf32> -> tensor<2x8x4x4xf32>
  %c4 = tcc.conv %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<2x1x8x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %p4 = tcc.max_pool %c4 kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [2, 2] : tensor<2x8x8x8xf32> -> tensor<2x8x3x3xf32>
  return %p, %p2, %p3, %p4 : tensor<2x8x4x4xf32>, tensor<2x8x7x7xf32>, tensor<2x8x4x4xf32>, tensor<2x8x3x3xf32>
}

// -----

// Tests that a 1x1 convolution takes the per-channel scale, shift and relu
// before it (a BatchNorm and ReLU: its kernel applies them as it packs the
// input), and what it does not take: a relu read twice, the ops before a
// 3x3 convolution (an elementwise group), and an add of a whole tensor
// (not a shift per channel; the relu after it alone is a prologue).
// CHECK-LABEL: func @conv_prologue
// CHECK: %[[G:.*]] = tcc.fused "contraction"(%arg0, %arg1, %arg2, %arg3 : tensor<1x4x3x3xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
// CHECK:   tcc.mul
// CHECK:   tcc.add
// CHECK:   tcc.relu
// CHECK:   tcc.conv
// CHECK:   tcc.yield
// CHECK: %[[R:.*]] = tcc.relu %arg0
// CHECK: tcc.conv %[[R]], %arg3
// CHECK: %[[E:.*]] = tcc.fused "elementwise"(%arg0, %arg1, %arg2 : {{.*}}) -> tensor<1x4x3x3xf32>
// CHECK: tcc.conv %[[E]], %arg4
// CHECK: %[[A:.*]] = tcc.add %arg0, %arg0
// CHECK: tcc.fused "contraction"(%[[A]], %arg3 : {{.*}}) -> tensor<1x8x3x3xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   tcc.relu
// CHECK-NEXT:   tcc.conv
func.func @conv_prologue(%x: tensor<1x4x3x3xf32>, %s: tensor<4x1x1xf32>, %t: tensor<4x1x1xf32>, %w: tensor<8x4x1x1xf32>, %w3: tensor<8x4x3x3xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) {
  %0 = tcc.mul %x, %s : (tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %1 = tcc.add %0, %t : (tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %2 = tcc.relu %1 : tensor<1x4x3x3xf32>
  %3 = tcc.conv %2, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x3x3xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  %4 = tcc.relu %x : tensor<1x4x3x3xf32>
  %5 = tcc.conv %4, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x3x3xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  %6 = tcc.mul %x, %s : (tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %7 = tcc.add %6, %t : (tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %8 = tcc.relu %7 : tensor<1x4x3x3xf32>
  %9 = tcc.conv %8, %w3 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x4x3x3xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  %10 = tcc.add %x, %x : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %11 = tcc.relu %10 : tensor<1x4x3x3xf32>
  %12 = tcc.conv %11, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x3x3xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  return %3, %5, %4, %9, %12 : tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>
}

// -----

// Tests that a depthwise convolution whose output a global average pooling
// reads (a squeeze-and-excitation block) yields the plane means as a
// second result of its group, the scale of the block reading the first;
// a mean over other axes, or of a convolution with one group, stays apart.
// CHECK-LABEL: func @depthwise_plane_means
// CHECK: %[[G:.*]]:2 = tcc.fused "contraction"(%arg0, %arg1, %arg2 : {{.*}}) -> tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>
// CHECK:   %[[C:.*]] = tcc.conv {{.*}} groups = 4
// CHECK:   %[[B:.*]] = tcc.add %[[C]]
// CHECK:   %[[R:.*]] = tcc.relu %[[B]]
// CHECK:   %[[M:.*]] = tcc.reduce_mean %[[R]] axes = [2, 3] keepdims
// CHECK:   tcc.yield %[[R]], %[[M]]
// CHECK: tcc.fused "rows"(%[[G]]#1, %[[G]]#0 : {{.*}})
// CHECK:   tcc.sigmoid
// CHECK:   tcc.mul
// CHECK: %[[W:.*]] = tcc.fused "contraction"(%arg0, %arg3 : {{.*}}) -> tensor<1x4x6x6xf32>
// CHECK: tcc.reduce_mean %[[W]] axes = [1] keepdims
// CHECK: %[[O:.*]] = tcc.fused "contraction"(%arg0, %arg4 : {{.*}}) -> tensor<1x4x6x6xf32>
// CHECK: tcc.reduce_mean %[[O]] axes = [2, 3] keepdims
func.func @depthwise_plane_means(%x: tensor<1x4x6x6xf32>, %dw: tensor<4x1x3x3xf32>, %db: tensor<1x4x1x1xf32>, %dw2: tensor<4x1x3x3xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x1x6x6xf32>, tensor<1x4x1x1xf32>) {
  %0 = tcc.conv %x, %dw strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = tcc.add %0, %db : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %2 = tcc.relu %1 : tensor<1x4x6x6xf32>
  %3 = tcc.reduce_mean %2 axes = [2, 3] keepdims : tensor<1x4x6x6xf32> -> tensor<1x4x1x1xf32>
  %4 = tcc.sigmoid %3 : tensor<1x4x1x1xf32>
  %5 = tcc.mul %2, %4 : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %6 = tcc.conv %x, %dw2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %7 = tcc.relu %6 : tensor<1x4x6x6xf32>
  %8 = tcc.reduce_mean %7 axes = [1] keepdims : tensor<1x4x6x6xf32> -> tensor<1x1x6x6xf32>
  %9 = tcc.conv %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %10 = tcc.relu %9 : tensor<1x4x6x6xf32>
  %11 = tcc.reduce_mean %10 axes = [2, 3] keepdims : tensor<1x4x6x6xf32> -> tensor<1x4x1x1xf32>
  return %5, %8, %11 : tensor<1x4x6x6xf32>, tensor<1x1x6x6xf32>, tensor<1x4x1x1xf32>
}
