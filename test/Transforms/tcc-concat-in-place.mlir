// RUN: tcc-opt %s --tcc-concat-in-place --split-input-file | FileCheck %s
// RUN: tcc-opt %s --tcc-concat-in-place --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --cse --canonicalize --split-input-file | FileCheck %s --check-prefix=BUF

// Tests that each piece a destination-style op makes into a tensor.empty of
// its own is computed into its slice of the concatenation, the inserts
// reordered after their producers (here the second piece is made first),
// and that after bufferization no copy is left.
// CHECK-LABEL: func @two_pieces
// CHECK: %[[D:.*]] = tensor.empty() : tensor<1x4x4xf32>
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[D]][0, 2, 0] [1, 2, 4] [1, 1, 1]
// CHECK: %[[B:.*]] = linalg.negf ins(%{{.*}} : tensor<1x2x4xf32>) outs(%[[S1]] : tensor<1x2x4xf32>)
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[D]][0, 2, 0]
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[I1]][0, 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK: %[[A:.*]] = linalg.exp ins(%{{.*}} : tensor<1x2x4xf32>) outs(%[[S0]] : tensor<1x2x4xf32>)
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[I1]][0, 0, 0]
// CHECK: return %[[I0]]
// BUF-LABEL: func @two_pieces
// BUF-NOT: memref.copy
// BUF: linalg.negf
// BUF-NOT: memref.copy
// BUF: linalg.exp
// BUF-NOT: memref.copy
// BUF: return
func.func @two_pieces(%x: tensor<1x2x4xf32>, %y: tensor<1x2x4xf32>) -> tensor<1x4x4xf32> {
  %e1 = tensor.empty() : tensor<1x2x4xf32>
  %b = linalg.negf ins(%y : tensor<1x2x4xf32>) outs(%e1 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %e0 = tensor.empty() : tensor<1x2x4xf32>
  %a = linalg.exp ins(%x : tensor<1x2x4xf32>) outs(%e0 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %d = tensor.empty() : tensor<1x4x4xf32>
  %i0 = tensor.insert_slice %a into %d[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
  %i1 = tensor.insert_slice %b into %i0[0, 2, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
  return %i1 : tensor<1x4x4xf32>
}

// -----

// Tests that a micro-kernel takes a slice only where it is contiguous: along
// the channels of a batch of one it does; of a batch of two it does not,
// and that piece keeps its own tensor and its copy.
// CHECK-LABEL: func @ukernel_contiguous
// CHECK: %[[D:.*]] = tensor.empty() : tensor<1x8x2x2xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %{{.*}} into %[[D]][0, 4, 0, 0]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[I1]][0, 0, 0, 0] [1, 4, 2, 2]
// CHECK: tcc.ukernel "conv2d" {{.*}} outs(%[[S]] : tensor<1x4x2x2xf32>)
// BUF-LABEL: func @ukernel_contiguous
// BUF: %[[D:.*]] = memref.alloc() {{.*}} : memref<1x8x2x2xf32>
// BUF: %[[S:.*]] = memref.subview %[[D]][0, 0, 0, 0] [1, 4, 2, 2]
// BUF: tcc.ukernel "conv2d" {{.*}} outs(%[[S]] : memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>)
// BUF-NOT: memref.copy
// BUF: return
func.func @ukernel_contiguous(%x: tensor<1x4x2x2xf32>, %w: tensor<64xf32>, %y: tensor<1x4x2x2xf32>) -> tensor<1x8x2x2xf32> {
  %e0 = tensor.empty() : tensor<1x4x2x2xf32>
  %a = tcc.ukernel "conv2d" ins(%x, %w : tensor<1x4x2x2xf32>, tensor<64xf32>) outs(%e0 : tensor<1x4x2x2xf32>) params {flags = 0 : i64} -> tensor<1x4x2x2xf32>
  %d = tensor.empty() : tensor<1x8x2x2xf32>
  %i0 = tensor.insert_slice %a into %d[0, 0, 0, 0] [1, 4, 2, 2] [1, 1, 1, 1] : tensor<1x4x2x2xf32> into tensor<1x8x2x2xf32>
  %i1 = tensor.insert_slice %y into %i0[0, 4, 0, 0] [1, 4, 2, 2] [1, 1, 1, 1] : tensor<1x4x2x2xf32> into tensor<1x8x2x2xf32>
  return %i1 : tensor<1x8x2x2xf32>
}

// -----

// CHECK-LABEL: func @ukernel_strided
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4x2x2xf32>
// CHECK: tcc.ukernel "conv2d" {{.*}} outs(%[[E]] : tensor<2x4x2x2xf32>)
// CHECK-NOT: tensor.extract_slice
// BUF-LABEL: func @ukernel_strided
// BUF: tcc.ukernel "conv2d" {{.*}} outs(%[[O:.*]] : memref<2x4x2x2xf32>)
// BUF: %[[S:.*]] = memref.subview %{{.*}}[0, 0, 0, 0] [2, 4, 2, 2]
// BUF: memref.copy %[[O]], %[[S]]
func.func @ukernel_strided(%x: tensor<2x4x2x2xf32>, %w: tensor<64xf32>, %y: tensor<2x4x2x2xf32>) -> tensor<2x8x2x2xf32> {
  %e0 = tensor.empty() : tensor<2x4x2x2xf32>
  %a = tcc.ukernel "conv2d" ins(%x, %w : tensor<2x4x2x2xf32>, tensor<64xf32>) outs(%e0 : tensor<2x4x2x2xf32>) params {flags = 0 : i64} -> tensor<2x4x2x2xf32>
  %d = tensor.empty() : tensor<2x8x2x2xf32>
  %i0 = tensor.insert_slice %a into %d[0, 0, 0, 0] [2, 4, 2, 2] [1, 1, 1, 1] : tensor<2x4x2x2xf32> into tensor<2x8x2x2xf32>
  %i1 = tensor.insert_slice %y into %i0[0, 4, 0, 0] [2, 4, 2, 2] [1, 1, 1, 1] : tensor<2x4x2x2xf32> into tensor<2x8x2x2xf32>
  return %i1 : tensor<2x8x2x2xf32>
}

// -----

// Tests that a piece also read elsewhere keeps its own tensor, and that a
// concatenation with no piece in place is left where and as it was.
// CHECK-LABEL: func @shared_piece
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<1x2x4xf32>
// CHECK: %[[A:.*]] = linalg.exp ins(%{{.*}} : tensor<1x2x4xf32>) outs(%[[E0]] : tensor<1x2x4xf32>)
// CHECK: %[[N:.*]] = linalg.negf ins(%[[A]] : tensor<1x2x4xf32>)
// CHECK: %[[D:.*]] = tensor.empty() : tensor<1x4x4xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: tensor.insert_slice %[[A]] into %[[D]][0, 0, 0]
// CHECK: tensor.insert_slice %[[N]] into %{{.*}}[0, 2, 0]
func.func @shared_piece(%x: tensor<1x2x4xf32>) -> tensor<1x4x4xf32> {
  %e0 = tensor.empty() : tensor<1x2x4xf32>
  %a = linalg.exp ins(%x : tensor<1x2x4xf32>) outs(%e0 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %e1 = tensor.empty() : tensor<1x2x4xf32>
  %n = linalg.negf ins(%a : tensor<1x2x4xf32>) outs(%e1 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %m = linalg.exp ins(%n : tensor<1x2x4xf32>) outs(%e1 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %d = tensor.empty() : tensor<1x4x4xf32>
  %i0 = tensor.insert_slice %a into %d[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
  %i1 = tensor.insert_slice %n into %i0[0, 2, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
  return %i1 : tensor<1x4x4xf32>
}

// -----

// Tests that a concatenation that is a leading slice of a larger one with
// the same pieces at the same places (a dense block: each layer takes the
// block's input and every earlier layer's features) is read out of the
// larger one's chain, right after its last piece is in, and that its
// pieces, now read by one insert each, are computed in place.
// CHECK-LABEL: func @dense_block
// CHECK: %[[D:.*]] = tensor.empty() : tensor<1x6x4xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[D]][0, 0, 0] [1, 2, 4]
// CHECK: %[[X:.*]] = linalg.exp ins(%{{.*}} : tensor<1x2x4xf32>) outs(%[[S0]] : tensor<1x2x4xf32>)
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[X]] into %[[D]][0, 0, 0]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[I0]][0, 2, 0] [1, 2, 4]
// CHECK: %[[F1:.*]] = linalg.negf ins(%{{.*}} : tensor<1x2x4xf32>) outs(%[[S1]] : tensor<1x2x4xf32>)
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[F1]] into %[[I0]][0, 2, 0]
// CHECK: %[[C1:.*]] = tensor.extract_slice %[[I1]][0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<1x6x4xf32> to tensor<1x4x4xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[C1]] : tensor<1x4x4xf32>)
// CHECK: %[[S2:.*]] = tensor.extract_slice %[[I1]][0, 4, 0] [1, 2, 4]
// CHECK: linalg.exp ins(%{{.*}} : tensor<1x2x4xf32>) outs(%[[S2]] : tensor<1x2x4xf32>)
// CHECK: %[[I2:.*]] = tensor.insert_slice
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[I2]], %[[R]]
// BUF-LABEL: func @dense_block
// BUF-NOT: memref.copy
// BUF: return
func.func @dense_block(%x: tensor<1x2x4xf32>, %y: tensor<1x2x4xf32>, %z: tensor<1x2x4xf32>) -> (tensor<1x6x4xf32>, tensor<1x2x4xf32>) {
  %e0 = tensor.empty() : tensor<1x2x4xf32>
  %a = linalg.exp ins(%x : tensor<1x2x4xf32>) outs(%e0 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %e1 = tensor.empty() : tensor<1x2x4xf32>
  %f1 = linalg.negf ins(%y : tensor<1x2x4xf32>) outs(%e1 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %d1 = tensor.empty() : tensor<1x4x4xf32>
  %c1a = tensor.insert_slice %a into %d1[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
  %c1 = tensor.insert_slice %f1 into %c1a[0, 2, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
  %er = tensor.empty() : tensor<1x2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 * 2, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c1 : tensor<1x4x4xf32>) outs(%er : tensor<1x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4xf32>
  %e2 = tensor.empty() : tensor<1x2x4xf32>
  %f2 = linalg.exp ins(%r : tensor<1x2x4xf32>) outs(%e2 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %d2 = tensor.empty() : tensor<1x6x4xf32>
  %c2a = tensor.insert_slice %a into %d2[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x6x4xf32>
  %c2b = tensor.insert_slice %f1 into %c2a[0, 2, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x6x4xf32>
  %c2 = tensor.insert_slice %f2 into %c2b[0, 4, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x6x4xf32>
  return %c2, %r : tensor<1x6x4xf32>, tensor<1x2x4xf32>
}

// -----

// Tests three layers of a dense block: both smaller concatenations are read
// out of the largest one, each as soon as its pieces are in, and no insert
// of theirs is left.
// CHECK-LABEL: func @dense_three
// CHECK: %[[D:.*]] = tensor.empty() : tensor<1x4xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %{{.*}} into %[[D]][0, 0] [1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %{{.*}} into %[[I0]][0, 1] [1, 1]
// CHECK: %[[C1:.*]] = tensor.extract_slice %[[I1]][0, 0] [1, 2] [1, 1] : tensor<1x4xf32> to tensor<1x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C1]] : tensor<1x2xf32>)
// CHECK: %[[I2:.*]] = tensor.insert_slice %{{.*}} into %[[I1]][0, 2] [1, 1]
// CHECK: %[[C2:.*]] = tensor.extract_slice %[[I2]][0, 0] [1, 3] [1, 1] : tensor<1x4xf32> to tensor<1x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C2]] : tensor<1x3xf32>)
// CHECK: %[[I3:.*]] = tensor.insert_slice %{{.*}} into %[[I2]][0, 3] [1, 1]
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[I3]]
#first = affine_map<(d0, d1) -> (d0, 0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @dense_three(%x: tensor<1x1xf32>, %y: tensor<1x1xf32>) -> tensor<1x4xf32> {
  %e1 = tensor.empty() : tensor<1x1xf32>
  %f1 = linalg.negf ins(%y : tensor<1x1xf32>) outs(%e1 : tensor<1x1xf32>) -> tensor<1x1xf32>
  %d1 = tensor.empty() : tensor<1x2xf32>
  %c1a = tensor.insert_slice %x into %d1[0, 0] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x2xf32>
  %c1 = tensor.insert_slice %f1 into %c1a[0, 1] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x2xf32>
  %e2 = tensor.empty() : tensor<1x1xf32>
  %f2 = linalg.generic {indexing_maps = [#first, #id], iterator_types = ["parallel", "parallel"]} ins(%c1 : tensor<1x2xf32>) outs(%e2 : tensor<1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x1xf32>
  %d2 = tensor.empty() : tensor<1x3xf32>
  %c2a = tensor.insert_slice %x into %d2[0, 0] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x3xf32>
  %c2b = tensor.insert_slice %f1 into %c2a[0, 1] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x3xf32>
  %c2 = tensor.insert_slice %f2 into %c2b[0, 2] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x3xf32>
  %e3 = tensor.empty() : tensor<1x1xf32>
  %f3 = linalg.generic {indexing_maps = [#first, #id], iterator_types = ["parallel", "parallel"]} ins(%c2 : tensor<1x3xf32>) outs(%e3 : tensor<1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x1xf32>
  %d3 = tensor.empty() : tensor<1x4xf32>
  %c3a = tensor.insert_slice %x into %d3[0, 0] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x4xf32>
  %c3b = tensor.insert_slice %f1 into %c3a[0, 1] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x4xf32>
  %c3c = tensor.insert_slice %f2 into %c3b[0, 2] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x4xf32>
  %c3 = tensor.insert_slice %f3 into %c3c[0, 3] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x4xf32>
  return %c3 : tensor<1x4xf32>
}
