// RUN: tcc-opt %s --tcc-merge-sibling-convs --split-input-file | FileCheck %s

// Two 1x1s of one input, each followed by a relu: one convolution of the
// stacked filters (block order) and biases (none is zeros), one relu, a
// split whose pieces replace the relus.
// CHECK-LABEL: func @relus
// CHECK-DAG: %[[W:.*]] = tcc.constant dense_resource<merged_weight{{.*}}> : tensor<3x2x1x1xf32>
// CHECK-DAG: %[[B:.*]] = tcc.constant dense<[1.000000e+00, 2.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK: %[[C:.*]] = tcc.conv %arg0, %[[W]], %[[B]] {{.*}} -> tensor<1x3x4x4xf32>
// CHECK: %[[R:.*]] = tcc.relu %[[C]] : tensor<1x3x4x4xf32>
// CHECK: %[[P:.*]]:2 = tcc.split %[[R]] axis = 1 : tensor<1x3x4x4xf32> -> tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
// CHECK-NOT: tcc.conv
// CHECK-NOT: tcc.relu
// CHECK: return %[[P]]#0, %[[P]]#1
func.func @relus(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w1 = tcc.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %b1 = tcc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %w2 = tcc.constant dense<[[[[5.0]], [[6.0]]]]> : tensor<1x2x1x1xf32>
  %a = tcc.conv %x, %w1, %b1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %ra = tcc.relu %a : tensor<1x2x4x4xf32>
  %c = tcc.conv %x, %w2 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %rc = tcc.relu %c : tensor<1x1x4x4xf32>
  return %ra, %rc : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// Without activations (each read by another op): merged, the split's
// pieces read where the convolutions' results were.
// CHECK-LABEL: func @no_activation
// CHECK: %[[C:.*]] = tcc.conv {{.*}} -> tensor<1x3x4x4xf32>
// CHECK: %[[P:.*]]:2 = tcc.split %[[C]] axis = 1
// CHECK: tcc.add %[[P]]#0, %[[P]]#0
// CHECK: tcc.mul %[[P]]#1, %[[P]]#1
func.func @no_activation(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w1 = tcc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %w2 = tcc.constant dense<2.0> : tensor<1x2x1x1xf32>
  %a = tcc.conv %x, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c = tcc.conv %x, %w2 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %s = tcc.add %a, %a : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = tcc.mul %c, %c : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %s, %p : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// Left apart: different activations, a 3x3, a stride, a batch of two,
// weights that are not constants.
// CHECK-LABEL: func @apart
// CHECK-NOT: tcc.split
// CHECK-COUNT-2: tcc.conv
// CHECK-NOT: tcc.split
func.func @apart(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w1 = tcc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %w2 = tcc.constant dense<2.0> : tensor<1x2x1x1xf32>
  %a = tcc.conv %x, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %ra = tcc.relu %a : tensor<1x2x4x4xf32>
  %c = tcc.conv %x, %w2 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %sc = tcc.sigmoid %c : tensor<1x1x4x4xf32>
  return %ra, %sc : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
}

// CHECK-LABEL: func @not_pointwise
// CHECK-NOT: tcc.split
// CHECK-COUNT-4: tcc.conv
// CHECK-NOT: tcc.split
func.func @not_pointwise(%x: tensor<1x2x4x4xf32>, %y: tensor<2x2x4x4xf32>, %wv: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>, tensor<2x2x4x4xf32>) {
  %w1 = tcc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %w3 = tcc.constant dense<2.0> : tensor<1x2x3x3xf32>
  %w2 = tcc.constant dense<2.0> : tensor<1x2x1x1xf32>
  %a = tcc.conv %x, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c = tcc.conv %x, %w2 strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x2x2xf32>
  %d = tcc.conv %x, %wv strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %e = tcc.conv %y, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<2x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<2x2x4x4xf32>
  return %a, %c, %d, %e : tensor<1x2x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>, tensor<2x2x4x4xf32>
}
