// RUN: tcc-opt %s --tcc-convolutions-to-gemm --split-input-file | FileCheck %s

#in = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, f, c, kh, kw)>
#out = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>

// Tests a 3x3 stride-2 convolution of two images: the windows are copied
// into columns [image, c*kh*kw, oh*ow] and the filter [f, c*kh*kw] meets
// them in a contraction batched over the images.
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d5 * 2 + d3, d6 * 2 + d4)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[FILTER:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @strided
// CHECK: %[[COPY:.*]] = linalg.generic {indexing_maps = [#[[READ]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%arg0 : tensor<2x1x8x9x9xf32>) outs(%{{.*}} : tensor<2x1x8x3x3x4x4xf32>)
// CHECK: %[[C4:.*]] = tensor.collapse_shape %[[COPY]] {{\[}}[0], [1], [2, 3, 4], [5, 6]] : tensor<2x1x8x3x3x4x4xf32> into tensor<2x1x72x16xf32>
// CHECK: %[[C3:.*]] = tensor.collapse_shape %[[C4]] {{\[}}[0, 1], [2], [3]] : tensor<2x1x72x16xf32> into tensor<2x72x16xf32>
// CHECK: %[[INIT:.*]] = tensor.collapse_shape %arg2 {{\[}}[0, 1], [2], [3, 4]] : tensor<2x1x32x4x4xf32> into tensor<2x32x16xf32>
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2, 3, 4]] : tensor<1x32x8x3x3xf32> into tensor<32x72xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[COL]], #[[FILTER]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[C3]], %[[W]] : tensor<2x72x16xf32>, tensor<32x72xf32>) outs(%[[INIT]] : tensor<2x32x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[G]] {{\[}}[0, 1], [2], [3, 4]] output_shape [2, 1, 32, 4, 4]
func.func @strided(%x: tensor<2x1x8x9x9xf32>, %w: tensor<1x32x8x3x3xf32>, %init: tensor<2x1x32x4x4xf32>) -> tensor<2x1x32x4x4xf32> {
  %r = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<2x1x8x9x9xf32>, tensor<1x32x8x3x3xf32>) outs(%init : tensor<2x1x32x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x1x32x4x4xf32>
  return %r : tensor<2x1x32x4x4xf32>
}

// -----

#in = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh + kh, ow + kw)>
#w = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, f, c, kh, kw)>
#out = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>

// Tests that a 1x1 stride-1 convolution reads its input as columns without
// a copy, and that one image of two groups is batched over the groups.
// CHECK-LABEL: func.func @pointwise_groups
// CHECK-NOT: tensor.empty
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2], [3, 4]] : tensor<1x2x32x5x5xf32> into tensor<1x2x32x25xf32>
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3, 4]] : tensor<2x16x32x1x1xf32> into tensor<2x16x32xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[GF:.*]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x32x25xf32>, tensor<2x16x32xf32>) outs(%{{.*}} : tensor<2x16x25xf32>)
func.func @pointwise_groups(%x: tensor<1x2x32x5x5xf32>, %w: tensor<2x16x32x1x1xf32>, %init: tensor<1x2x16x5x5xf32>) -> tensor<1x2x16x5x5xf32> {
  %r = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x2x32x5x5xf32>, tensor<2x16x32x1x1xf32>) outs(%init : tensor<1x2x16x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x2x16x5x5xf32>
  return %r : tensor<1x2x16x5x5xf32>
}

// -----

#in = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh + kh, ow + kw)>
#w = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, f, c, kh, kw)>
#out = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>

// Tests that a depthwise convolution (one output channel a group) stays.
// CHECK-LABEL: func.func @depthwise
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-NOT: tensor.collapse_shape
func.func @depthwise(%x: tensor<1x32x1x7x7xf32>, %w: tensor<32x1x1x3x3xf32>, %init: tensor<1x32x1x5x5xf32>) -> tensor<1x32x1x5x5xf32> {
  %r = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x32x1x7x7xf32>, tensor<32x1x1x3x3xf32>) outs(%init : tensor<1x32x1x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x32x1x5x5xf32>
  return %r : tensor<1x32x1x5x5xf32>
}
