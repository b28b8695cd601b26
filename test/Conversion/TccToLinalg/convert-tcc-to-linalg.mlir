// RUN: tcc-opt %s --convert-tcc-to-linalg --split-input-file | FileCheck %s

// Tests that an elementwise op is one parallel generic that reads the smaller
// operand through a broadcasting map.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @elementwise_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK-NOT: tcc.
func.func @elementwise_broadcast(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = tcc.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a size-1 dimension that stretches reads index 0, and that an
// integer comparison is signed.
// CHECK-DAG: #[[COL0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @stretch_unit_dim
// CHECK: linalg.generic {indexing_maps = [#[[COL0]],
// CHECK: arith.cmpi slt
func.func @stretch_unit_dim(%a: tensor<4x1xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi1> {
  %0 = tcc.cmp lt, %a, %b : (tensor<4x1xi32>, tensor<4x3xi32>) -> tensor<4x3xi1>
  return %0 : tensor<4x3xi1>
}

// -----

// Tests that float to integer casts truncate.
// CHECK-LABEL: func @cast
// CHECK: arith.fptosi %{{.*}} : f32 to i64
func.func @cast(%a: tensor<4xf32>) -> tensor<4xi64> {
  %0 = tcc.cast %a : tensor<4xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Tests that gelu is computed in one body through erf.
// CHECK-LABEL: func @gelu
// CHECK: linalg.generic
// CHECK: math.erf
// CHECK-NOT: linalg.generic
func.func @gelu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.gelu %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a reduction fills its identity, reduces (a float sum may be
// reassociated, for vectorizing), and re-inserts the kept dimension with a
// reshape.
// CHECK-LABEL: func @reduce_sum_keepdims
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [2, 1]
func.func @reduce_sum_keepdims(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %0 = tcc.reduce_sum %a axes = [1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Tests that a mean is a sum divided by the reduced element count.
// CHECK-LABEL: func @reduce_mean
// CHECK: iterator_types = ["reduction", "parallel"]
// CHECK: %[[N:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[N]]
func.func @reduce_mean(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = tcc.reduce_mean %a axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that argmax carries (value, index) through one reduction and takes
// the first NaN.
// CHECK-LABEL: func @argmax
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: linalg.index 1
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: return %[[R]]#1
func.func @argmax(%a: tensor<2x3xf32>) -> tensor<2xi64> {
  %0 = tcc.argmax %a axis = 1 : tensor<2x3xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Tests that a batch of rows times a matrix is one linalg.matmul.
// CHECK-LABEL: func @matmul_rows
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x5x6xf32> into tensor<10x6xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<10x6xf32>, tensor<6x7xf32>)
// CHECK: tensor.expand_shape
func.func @matmul_rows(%a: tensor<2x5x6xf32>, %b: tensor<6x7xf32>) -> tensor<2x5x7xf32> {
  %0 = tcc.matmul %a, %b : (tensor<2x5x6xf32>, tensor<6x7xf32>) -> tensor<2x5x7xf32>
  return %0 : tensor<2x5x7xf32>
}

// -----

// Tests that broadcast batch dimensions are folded into the indexing maps.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: func @matmul_batch_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
func.func @matmul_batch_broadcast(%a: tensor<1x5x6xf32>, %b: tensor<3x6x7xf32>) -> tensor<3x5x7xf32> {
  %0 = tcc.matmul %a, %b : (tensor<1x5x6xf32>, tensor<3x6x7xf32>) -> tensor<3x5x7xf32>
  return %0 : tensor<3x5x7xf32>
}

// -----

// Tests that a grouped, strided, padded convolution pads with zeros, splits
// channels into groups and starts from the bias.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 * 2 + d7)>
// CHECK-LABEL: func @conv_grouped
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 7, 7]
// CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<1x2x3x3x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], {{.*}} outs(%[[BIAS]] :
// CHECK: tensor.collapse_shape %{{.*}} into tensor<1x6x3x3xf32>
func.func @conv_grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x3x3xf32> {
  %0 = tcc.conv %x, %w, %b strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 2 : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// Tests that max pooling pads with -inf, enough for ceil_mode's last window.
// CHECK-LABEL: func @max_pool_ceil
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEGINF]]
// CHECK: tensor.empty() : tensor<3x3xf32>
// CHECK: arith.maximumf
func.func @max_pool_ceil(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = tcc.max_pool %x kernel = [3, 3] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Tests that average pooling divides by the per-position count of elements
// inside the input (padding not counted).
// CHECK-LABEL: func @avg_pool
// CHECK: arith.addf
// CHECK: arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = tcc.avg_pool %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Tests reshape (a collapse), transpose, broadcast and concatenation.
// CHECK-LABEL: func @shape_ops
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: linalg.transpose {{.*}} permutation = [2, 0, 1]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x2x3x4xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 3, 0] [2, 5, 4] [1, 1, 1]
func.func @shape_ops(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>) -> (tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<5x2x3x4xf32>, tensor<2x8x4xf32>) {
  %0 = tcc.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = tcc.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %2 = tcc.broadcast_to %x : tensor<2x3x4xf32> -> tensor<5x2x3x4xf32>
  %3 = tcc.concat %x, %y axis = 1 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  return %0, %1, %2, %3 : tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<5x2x3x4xf32>, tensor<2x8x4xf32>
}

// -----

// Tests that forward slices and splits are extract_slice ops and a reversed
// slice reads through offset + i * step.
// CHECK-DAG: #[[REV:.*]] = affine_map<(d0) -> (d0 * -2 + 7)>
// CHECK-LABEL: func @slices
// CHECK: tensor.extract_slice %{{.*}}[1] [3] [2]
// CHECK: linalg.generic {indexing_maps = [#[[REV]],
// CHECK: tensor.extract_slice %{{.*}}[0] [2] [1]
// CHECK: tensor.extract_slice %{{.*}}[2] [6] [1]
func.func @slices(%x: tensor<8xf32>) -> (tensor<3xf32>, tensor<4xf32>, tensor<2xf32>, tensor<6xf32>) {
  %0 = tcc.slice %x offsets = [1] steps = [2] : tensor<8xf32> -> tensor<3xf32>
  %1 = tcc.slice %x offsets = [7] steps = [-2] : tensor<8xf32> -> tensor<4xf32>
  %2:2 = tcc.split %x axis = 0 : tensor<8xf32> -> tensor<2xf32>, tensor<6xf32>
  return %0, %1, %2#0, %2#1 : tensor<3xf32>, tensor<4xf32>, tensor<2xf32>, tensor<6xf32>
}

// -----

// Tests that gather wraps negative indices and clamps the rest into range
// before reading.
// CHECK-LABEL: func @gather
// CHECK: arith.index_cast
// CHECK: arith.cmpi slt
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<10x4xf32>
func.func @gather(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = tcc.gather %t, %i axis = 0 : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests constant padding (tensor.pad) and reflect padding (index arithmetic).
// CHECK-LABEL: func @pads
// CHECK: tensor.pad %{{.*}} low[1] high[2]
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.remsi
// CHECK: tensor.extract
func.func @pads(%x: tensor<3xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %0 = tcc.pad %x low = [1] high = [2] mode = constant value = 5.0 : tensor<3xf32> -> tensor<6xf32>
  %1 = tcc.pad %x low = [1] high = [2] mode = reflect : tensor<3xf32> -> tensor<6xf32>
  return %0, %1 : tensor<6xf32>, tensor<6xf32>
}

// -----

// Tests that border padding of an empty batch is the empty result, with no
// loop reading the (empty) input (empty tensors at the interface then
// become placeholders of one element).
// CHECK-LABEL: func @pad_empty_batch
// CHECK: tensor.empty() : tensor<0x3x6xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pad_empty_batch(%x: tensor<0x3x3xf32>) -> tensor<0x3x6xf32> {
  %0 = tcc.pad %x low = [0, 0, 1] high = [0, 0, 2] mode = reflect : tensor<0x3x3xf32> -> tensor<0x3x6xf32>
  return %0 : tensor<0x3x6xf32>
}

// -----

// Tests that constants become arith constants and softmax lowers through its
// decomposition (max, subtract, exp, sum, divide).
// CHECK-LABEL: func @constant_and_softmax
// CHECK: arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @constant_and_softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = tcc.constant dense<1.0> : tensor<4xf32>
  %0 = tcc.add %x, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = tcc.softmax %0 axis = 1 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// Tests that an elementwise group is one generic whose body chains the
// scalar ops.
// CHECK-LABEL: func @fused_elementwise
// CHECK: linalg.generic
// CHECK:   arith.addf
// CHECK:   math.erf
// CHECK:   linalg.yield
// CHECK-NOT: linalg.generic
func.func @fused_elementwise(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tcc.fused "elementwise"(%x, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a0: tensor<4x8xf32>, %a1: tensor<8xf32>):
    %s = tcc.add %a0, %a1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %g = tcc.gelu %s : tensor<4x8xf32>
    tcc.yield %g : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that a row group is one loop over the leading dimensions computing
// a row at a time: slice in, the ops at row shape, slice out; the loop is
// marked as one whose rows may run in parallel.
// CHECK-LABEL: func @fused_rows
// CHECK: %[[N:.*]] = arith.constant 6 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x3x10xf32>)
// CHECK:   tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}, 0] [1, 1, 10] [1, 1, 1] : tensor<2x3x10xf32> to tensor<1x1x10xf32>
// CHECK:   arith.maximumf
// CHECK:   math.exp
// CHECK:   arith.divf
// CHECK:   tensor.insert_slice %{{.*}} into %[[ACC]]{{.*}} [1, 1, 10] [1, 1, 1] : tensor<1x1x10xf32> into tensor<2x3x10xf32>
// CHECK:   scf.yield
// CHECK: } {tcc.rows_loop}
func.func @fused_rows(%x: tensor<2x3x10xf32>) -> tensor<2x3x10xf32> {
  %0 = tcc.fused "rows"(%x : tensor<2x3x10xf32>) -> tensor<2x3x10xf32> {
  ^bb0(%a: tensor<2x3x10xf32>):
    %m = tcc.reduce_max %a axes = [2] keepdims : tensor<2x3x10xf32> -> tensor<2x3x1xf32>
    %d = tcc.sub %a, %m : (tensor<2x3x10xf32>, tensor<2x3x1xf32>) -> tensor<2x3x10xf32>
    %e = tcc.exp %d : tensor<2x3x10xf32>
    %s = tcc.reduce_sum %e axes = [2] keepdims : tensor<2x3x10xf32> -> tensor<2x3x1xf32>
    %r = tcc.div %e, %s : (tensor<2x3x10xf32>, tensor<2x3x1xf32>) -> tensor<2x3x10xf32>
    tcc.yield %r : tensor<2x3x10xf32>
  }
  return %0 : tensor<2x3x10xf32>
}

