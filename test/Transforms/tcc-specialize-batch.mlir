// RUN: tcc-opt %s --split-input-file --tcc-specialize-batch="max-chunk=2" | FileCheck %s

// A dense layer, softmax over the features: rows independent. @main becomes
// copies at 2 and 1 rows; the dimension keeps the input's name.
// CHECK: module attributes {tcc.batch = {chunks = array<i64: 2, 1>, inputs = [true, false], max = 2147483647 : i64, min = 1 : i64, name = "n", outputs = [true]}}
// CHECK-NOT: func.func @main(
// CHECK-LABEL: func.func @main_chunk2
// CHECK-SAME: (%{{.*}}: tensor<2x16xf32> {tcc.dims = ["n", ""], tcc.name = "x"}, %{{.*}}: tensor<16x4xf32>) -> tensor<2x4xf32>
// CHECK: tcc.matmul {{.*}} -> tensor<2x4xf32>
// CHECK: tcc.softmax {{.*}} : tensor<2x4xf32>
// CHECK-LABEL: func.func @main_chunk1
// CHECK-SAME: -> tensor<1x4xf32>
// CHECK: tcc.softmax {{.*}} : tensor<1x4xf32>
func.func @main(%x: tensor<?x16xf32> {tcc.name = "x", tcc.dims = ["n", ""]}, %w: tensor<16x4xf32>) -> tensor<?x4xf32> {
  %0 = tcc.matmul %x, %w : (tensor<?x16xf32>, tensor<16x4xf32>) -> tensor<?x4xf32>
  %1 = tcc.relu %0 : tensor<?x4xf32>
  %2 = tcc.softmax %1 axis = 1 : tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// Bounds from tcc.dim_bounds cap the slabs: one row at most, one slab; the
// convolution runs over N and the reshape keeps the row size.
// CHECK: tcc.batch = {chunks = array<i64: 1>, inputs = [true, false], max = 1 : i64, min = 1 : i64, name = "batch", outputs = [true]}
// CHECK-NOT: @main_chunk2
// CHECK-LABEL: func.func @main_chunk1(%{{.*}}: tensor<1x3x8x8xf32>
// CHECK: tcc.conv {{.*}} -> tensor<1x4x6x6xf32>
// CHECK: tcc.reshape {{.*}} : tensor<1x4x6x6xf32> -> tensor<1x144xf32>
module attributes {tcc.dim_bounds = {batch = array<i64: 1, 1>}} {
  func.func @main(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x144xf32> {
    %0 = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
    %1 = tcc.reshape %0 : tensor<?x4x6x6xf32> -> tensor<?x144xf32>
    return %1 : tensor<?x144xf32>
  }
}

// -----

// Rows merge whole and split back: [B, 3, 4] -> [3B, 4] -> (times weights)
// [3B, 5] -> [B, 3, 5]; a slab of 2 computes 6 merged rows.
// CHECK-LABEL: func.func @main_chunk2
// CHECK: tcc.reshape {{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: tcc.matmul {{.*}} : (tensor<6x4xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK: tcc.reshape {{.*}} : tensor<6x5xf32> -> tensor<2x3x5xf32>
// CHECK-LABEL: func.func @main_chunk1
// CHECK: tcc.reshape {{.*}} : tensor<1x3x4xf32> -> tensor<3x4xf32>
func.func @main(%x: tensor<?x3x4xf32>, %w: tensor<4x5xf32>) -> tensor<?x3x5xf32> {
  %0 = tcc.reshape %x : tensor<?x3x4xf32> -> tensor<?x4xf32>
  %1 = tcc.matmul %0, %w : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
  %2 = tcc.reshape %1 : tensor<?x5xf32> -> tensor<?x3x5xf32>
  return %2 : tensor<?x3x5xf32>
}

// -----

// Attention's layout: the batch moves to the middle ([B, S, D] -> [S, B, D]),
// heads split from D merge into it ([S, B*H, D/H], two rows a batch row),
// the heads are transposed to the front and back, and the rows merge back.
// Each value's dynamic dimension is fixed at its rows: 2 or 4 a slab row.
// CHECK-LABEL: func.func @main_chunk2
// CHECK: tcc.transpose {{.*}} : tensor<2x2x8xf32> -> tensor<2x2x8xf32>
// CHECK: tcc.reshape {{.*}} : tensor<2x2x8xf32> -> tensor<2x4x4xf32>
// CHECK: tcc.transpose {{.*}} : tensor<2x4x4xf32> -> tensor<4x2x4xf32>
// CHECK: tcc.softmax {{.*}} : tensor<4x2x4xf32>
// CHECK: tcc.matmul {{.*}} : (tensor<3x2xf32>, tensor<4x2x4xf32>) -> tensor<4x3x4xf32>
// CHECK: tcc.reshape {{.*}} : tensor<3x4x4xf32> -> tensor<3x2x8xf32>
// CHECK: tcc.transpose {{.*}} : tensor<3x2x8xf32> -> tensor<2x3x8xf32>
func.func @main(%x: tensor<?x2x8xf32>, %w: tensor<3x2xf32>) -> tensor<?x3x8xf32> {
  %0 = tcc.transpose %x perm = [1, 0, 2] : tensor<?x2x8xf32> -> tensor<2x?x8xf32>
  %1 = tcc.reshape %0 : tensor<2x?x8xf32> -> tensor<2x?x4xf32>
  %2 = tcc.transpose %1 perm = [1, 0, 2] : tensor<2x?x4xf32> -> tensor<?x2x4xf32>
  %3 = tcc.softmax %2 axis = 2 : tensor<?x2x4xf32>
  %4 = tcc.matmul %w, %3 : (tensor<3x2xf32>, tensor<?x2x4xf32>) -> tensor<?x3x4xf32>
  %5 = tcc.transpose %4 perm = [1, 0, 2] : tensor<?x3x4xf32> -> tensor<3x?x4xf32>
  %6 = tcc.reshape %5 : tensor<3x?x4xf32> -> tensor<3x?x8xf32>
  %7 = tcc.transpose %6 perm = [1, 0, 2] : tensor<3x?x8xf32> -> tensor<?x3x8xf32>
  return %7 : tensor<?x3x8xf32>
}

// -----

// Attention's projections on [S, B, D]: the sequence and batch merge into
// one dimension ([S*B, D], S blocks of the batch) and split back.
// CHECK-LABEL: func.func @main_chunk2
// CHECK: tcc.reshape {{.*}} : tensor<3x2x4xf32> -> tensor<6x4xf32>
// CHECK: tcc.matmul {{.*}} -> tensor<6x4xf32>
// CHECK: tcc.reshape {{.*}} : tensor<6x4xf32> -> tensor<3x2x4xf32>
func.func @main(%x: tensor<?x3x4xf32>, %w: tensor<4x4xf32>) -> tensor<?x3x4xf32> {
  %0 = tcc.transpose %x perm = [1, 0, 2] : tensor<?x3x4xf32> -> tensor<3x?x4xf32>
  %1 = tcc.reshape %0 : tensor<3x?x4xf32> -> tensor<?x4xf32>
  %2 = tcc.matmul %1, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %3 = tcc.reshape %2 : tensor<?x4xf32> -> tensor<3x?x4xf32>
  %4 = tcc.transpose %3 perm = [1, 0, 2] : tensor<3x?x4xf32> -> tensor<?x3x4xf32>
  return %4 : tensor<?x3x4xf32>
}

// -----

// A static graph is left as it is.
// CHECK-NOT: tcc.batch
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<3x4xf32>
func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tcc.relu %x : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// The buckets of a padded dimension (tcc-pad-dynamic-dims) with a batch
// beside it become slabs each, named after the bucket; the padded
// dimension's bounds are not the batch's.
// CHECK: tcc.batch = {chunks = array<i64: 2, 1>, inputs = [true, false], max = 3 : i64, min = 1 : i64, name = "b", outputs = [true]}
// CHECK-LABEL: func.func @main_pad4_chunk2(%{{.*}}: tensor<2x4x8xf32> {{.*}}, %{{.*}}: tensor<i64> {tcc.name = "seq"}) -> tensor<2x4x8xf32>
// CHECK-LABEL: func.func @main_pad4_chunk1(%{{.*}}: tensor<1x4x8xf32>
// CHECK-LABEL: func.func @main_pad2_chunk2(%{{.*}}: tensor<2x2x8xf32>
// CHECK-LABEL: func.func @main_pad2_chunk1(%{{.*}}: tensor<1x2x8xf32>
module attributes {tcc.dim_bounds = {b = array<i64: 1, 3>, seq = array<i64: 1, 4>}, tcc.padded = {buckets = array<i64: 4, 2>, inputs = [array<i64: 1>], max = 4 : i64, min = 1 : i64, name = "seq", outputs = [array<i64: 1>]}} {
  func.func @main_pad4(%x: tensor<?x4x8xf32> {tcc.dims = ["b", "seq", ""]}, %n: tensor<i64> {tcc.name = "seq"}) -> tensor<?x4x8xf32> {
    %0 = tcc.softmax %x axis = 1 : tensor<?x4x8xf32>
    return %0 : tensor<?x4x8xf32>
  }
  func.func @main_pad2(%x: tensor<?x2x8xf32> {tcc.dims = ["b", "seq", ""]}, %n: tensor<i64> {tcc.name = "seq"}) -> tensor<?x2x8xf32> {
    %0 = tcc.softmax %x axis = 1 : tensor<?x2x8xf32>
    return %0 : tensor<?x2x8xf32>
  }
}
