// RUN: tcc-opt %s -canonicalize -split-input-file | FileCheck %s

// Tests that adding zero on either side folds away, but not when the zero
// would broadcast the other operand to a bigger shape.
// CHECK-LABEL: func @add_zero
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<f32>)
func.func @add_zero(%x: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %z = tcc.constant dense<0.0> : tensor<4xf32>
  %0 = tcc.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tcc.add %z, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[B:.*]] = tcc.add %[[S]], %{{.*}} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = tcc.add %s, %z : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %[[X]], %[[X]], %[[B]]
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that small constant operands fold, with broadcasting.
// CHECK-LABEL: func @fold_arith
func.func @fold_arith() -> (tensor<2x2xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xf32>) {
  %a = tcc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = tcc.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %i = tcc.constant dense<[6, 7]> : tensor<2xi64>
  %j = tcc.constant dense<[2, 3]> : tensor<2xi64>
  // CHECK-DAG: tcc.constant dense<{{\[}}[1.100000e+01, 2.200000e+01], [1.300000e+01, 2.400000e+01]]> : tensor<2x2xf32>
  %0 = tcc.add %a, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK-DAG: tcc.constant dense<[12, 21]> : tensor<2xi64>
  %1 = tcc.mul %i, %j : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // CHECK-DAG: tcc.constant dense<4> : tensor<2xi64>
  %2 = tcc.sub %i, %j : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // CHECK-DAG: tcc.constant dense<[5.000000e+00, 1.000000e+01]> : tensor<2xf32>
  %h = tcc.constant dense<2.0> : tensor<2xf32>
  %3 = tcc.div %b, %h : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // CHECK-NOT: tcc.add
  // CHECK-NOT: tcc.mul
  // CHECK-NOT: tcc.sub
  // CHECK-NOT: tcc.div
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xf32>
}

// -----

// Tests that integer division by zero is left for run time.
// CHECK-LABEL: func @no_fold_div_by_zero
func.func @no_fold_div_by_zero() -> tensor<2xi32> {
  %a = tcc.constant dense<[1, 2]> : tensor<2xi32>
  %z = tcc.constant dense<[1, 0]> : tensor<2xi32>
  // CHECK: tcc.div
  %0 = tcc.div %a, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// Tests that x - 0, x * 1, 1 * x and x / 1 fold to x.
// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
func.func @identities(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %z = tcc.constant dense<0.0> : tensor<4xf32>
  %o = tcc.constant dense<1.0> : tensor<f32>
  %oi = tcc.constant dense<1> : tensor<4xi32>
  %0 = tcc.sub %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tcc.mul %x, %o : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = tcc.mul %oi, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = tcc.div %x, %o : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: return %[[X]], %[[X]], %[[I]], %[[X]]
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// Tests that neg(neg(x)) is x and that neg of a constant folds.
// CHECK-LABEL: func @neg
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @neg(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<2xi8>) {
  %0 = tcc.neg %x : tensor<4xf32>
  %1 = tcc.neg %0 : tensor<4xf32>
  %c = tcc.constant dense<[1.5, -2.0]> : tensor<2xf32>
  // CHECK-DAG: %[[F:.*]] = tcc.constant dense<[-1.500000e+00, 2.000000e+00]> : tensor<2xf32>
  %2 = tcc.neg %c : tensor<2xf32>
  %ci = tcc.constant dense<[3, -4]> : tensor<2xi8>
  // CHECK-DAG: %[[I:.*]] = tcc.constant dense<[-3, 4]> : tensor<2xi8>
  %3 = tcc.neg %ci : tensor<2xi8>
  // CHECK: return %[[X]], %[[F]], %[[I]]
  return %1, %2, %3 : tensor<4xf32>, tensor<2xf32>, tensor<2xi8>
}

// -----

// Tests that select with a constant condition picks a side.
// CHECK-LABEL: func @select
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
func.func @select(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = tcc.constant dense<true> : tensor<4xi1>
  %f = tcc.constant dense<false> : tensor<i1>
  %0 = tcc.select %t, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tcc.select %f, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a cast to the same type folds and integer casts of constants
// fold (shape arithmetic).
// CHECK-LABEL: func @cast
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @cast(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %0 = tcc.cast %x : tensor<4xf32> -> tensor<4xf32>
  %c = tcc.constant dense<[-1, 300]> : tensor<2xi64>
  // CHECK: %[[C:.*]] = tcc.constant dense<[-1, 300]> : tensor<2xi32>
  %1 = tcc.cast %c : tensor<2xi64> -> tensor<2xi32>
  // CHECK: return %[[X]], %[[C]]
  return %0, %1 : tensor<4xf32>, tensor<2xi32>
}

// -----

// Tests that reducing over no axes is the identity.
// CHECK-LABEL: func @reduce_nothing
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @reduce_nothing(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.reduce_sum %x axes = [] : tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK: return %[[X]]
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that reshape to the same type folds, reshape of reshape becomes one
// reshape, and reshape of a constant folds.
// CHECK-LABEL: func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @reshape(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>, tensor<2x2xi64>) {
  %0 = tcc.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK-DAG: %[[R:.*]] = tcc.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
  %1 = tcc.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  %2 = tcc.reshape %1 : tensor<3x2xf32> -> tensor<6xf32>
  // CHECK-DAG: %[[C:.*]] = tcc.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
  %c = tcc.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %3 = tcc.reshape %c : tensor<4xi64> -> tensor<2x2xi64>
  // CHECK: return %[[X]], %[[R]], %[[C]]
  return %0, %2, %3 : tensor<2x3xf32>, tensor<6xf32>, tensor<2x2xi64>
}

// -----

// Tests that transposes compose, identity permutations vanish and constants
// fold through a permutation.
// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<3x2xi32>, tensor<2x2xf32>, tensor<2x3x4xf32>) {
  %0 = tcc.transpose %x perm = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = tcc.transpose %0 perm = [1, 0, 2] : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
  // CHECK-DAG: %[[T:.*]] = tcc.transpose %[[X]] perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %2 = tcc.transpose %0 perm = [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  // CHECK-DAG: %[[C:.*]] = tcc.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
  %c = tcc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %3 = tcc.transpose %c perm = [1, 0] : tensor<2x3xi32> -> tensor<3x2xi32>
  // CHECK-DAG: %[[S:.*]] = tcc.constant dense<7.000000e+00> : tensor<2x2xf32>
  %s = tcc.constant dense<7.0> : tensor<2x2xf32>
  %4 = tcc.transpose %s perm = [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %5 = tcc.transpose %x perm = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // CHECK: return %[[X]], %[[T]], %[[C]], %[[S]], %[[X]]
  return %1, %2, %3, %4, %5 : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<3x2xi32>, tensor<2x2xf32>, tensor<2x3x4xf32>
}

// -----

// Tests that the transpose of a product becomes the product of transposes,
// (AB)^T = B^T A^T, which cancel against transposes already there: the
// weight gradient of a linear layer, transpose(matmul(transpose(x), g)),
// becomes matmul(transpose(g), x) with no copy of the product.
// CHECK-LABEL: func @transposed_matmul
// CHECK-SAME: (%[[X:.*]]: tensor<64x784xf32>, %[[G:.*]]: tensor<64x512xf32>, %[[A:.*]]: tensor<8x4x3xf32>, %[[B:.*]]: tensor<8x3x5xf32>)
func.func @transposed_matmul(%x: tensor<64x784xf32>, %g: tensor<64x512xf32>, %a: tensor<8x4x3xf32>, %b: tensor<8x3x5xf32>) -> (tensor<512x784xf32>, tensor<8x5x4xf32>) {
  // CHECK: %[[GT:.*]] = tcc.transpose %[[G]] perm = [1, 0] : tensor<64x512xf32> -> tensor<512x64xf32>
  // CHECK: %[[DW:.*]] = tcc.matmul %[[GT]], %[[X]] : (tensor<512x64xf32>, tensor<64x784xf32>) -> tensor<512x784xf32>
  %xt = tcc.transpose %x perm = [1, 0] : tensor<64x784xf32> -> tensor<784x64xf32>
  %0 = tcc.matmul %xt, %g : (tensor<784x64xf32>, tensor<64x512xf32>) -> tensor<784x512xf32>
  %1 = tcc.transpose %0 perm = [1, 0] : tensor<784x512xf32> -> tensor<512x784xf32>
  // CHECK: %[[BT:.*]] = tcc.transpose %[[B]] perm = [0, 2, 1] : tensor<8x3x5xf32> -> tensor<8x5x3xf32>
  // CHECK: %[[AT:.*]] = tcc.transpose %[[A]] perm = [0, 2, 1] : tensor<8x4x3xf32> -> tensor<8x3x4xf32>
  // CHECK: %[[P:.*]] = tcc.matmul %[[BT]], %[[AT]] : (tensor<8x5x3xf32>, tensor<8x3x4xf32>) -> tensor<8x5x4xf32>
  %2 = tcc.matmul %a, %b : (tensor<8x4x3xf32>, tensor<8x3x5xf32>) -> tensor<8x4x5xf32>
  %3 = tcc.transpose %2 perm = [0, 2, 1] : tensor<8x4x5xf32> -> tensor<8x5x4xf32>
  // CHECK: return %[[DW]], %[[P]]
  return %1, %3 : tensor<512x784xf32>, tensor<8x5x4xf32>
}

// -----

// Tests that a transpose of a matmul used elsewhere too, or permuting more
// than the last two dimensions, stays.
// CHECK-LABEL: func @transposed_matmul_kept
// CHECK: %[[P:.*]] = tcc.matmul
// CHECK: tcc.transpose %[[P]]
// CHECK: tcc.transpose %{{.*}} perm = [2, 1, 0]
func.func @transposed_matmul_kept(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<8x4x3xf32>, %d: tensor<8x3x5xf32>) -> (tensor<4x5xf32>, tensor<5x4xf32>, tensor<5x4x8xf32>) {
  %0 = tcc.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = tcc.transpose %0 perm = [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
  %2 = tcc.matmul %c, %d : (tensor<8x4x3xf32>, tensor<8x3x5xf32>) -> tensor<8x4x5xf32>
  %3 = tcc.transpose %2 perm = [2, 1, 0] : tensor<8x4x5xf32> -> tensor<5x4x8xf32>
  return %0, %1, %3 : tensor<4x5xf32>, tensor<5x4xf32>, tensor<5x4x8xf32>
}

// -----

// Tests that broadcast_to to the same type folds and a splat constant
// broadcasts at compile time.
// CHECK-LABEL: func @broadcast_to
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
func.func @broadcast_to(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2x3xf32>) {
  %0 = tcc.broadcast_to %x : tensor<3xf32> -> tensor<3xf32>
  %c = tcc.constant dense<2.0> : tensor<1xf32>
  // CHECK: %[[C:.*]] = tcc.constant dense<2.000000e+00> : tensor<2x3xf32>
  %1 = tcc.broadcast_to %c : tensor<1xf32> -> tensor<2x3xf32>
  // CHECK: return %[[X]], %[[C]]
  return %0, %1 : tensor<3xf32>, tensor<2x3xf32>
}

// -----

// Tests that a concat of one tensor is that tensor.
// CHECK-LABEL: func @concat_one
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
func.func @concat_one(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = tcc.concat %x axis = 0 : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: return %[[X]]
  return %0 : tensor<3xf32>
}

// -----

// Tests that a whole-tensor slice folds and a slice of a constant folds
// (negative steps included).
// CHECK-LABEL: func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
func.func @slice(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2xi64>, tensor<2xi64>) {
  %0 = tcc.slice %x offsets = [0] steps = [1] : tensor<3xf32> -> tensor<3xf32>
  %c = tcc.constant dense<[10, 20, 30, 40]> : tensor<4xi64>
  // CHECK-DAG: %[[A:.*]] = tcc.constant dense<[20, 40]> : tensor<2xi64>
  %1 = tcc.slice %c offsets = [1] steps = [2] : tensor<4xi64> -> tensor<2xi64>
  // CHECK-DAG: %[[B:.*]] = tcc.constant dense<[40, 30]> : tensor<2xi64>
  %2 = tcc.slice %c offsets = [3] steps = [-1] : tensor<4xi64> -> tensor<2xi64>
  // CHECK: return %[[X]], %[[A]], %[[B]]
  return %0, %1, %2 : tensor<3xf32>, tensor<2xi64>, tensor<2xi64>
}

// -----

// Tests that a split into one piece is its input and that the pieces of a
// constant fold to constants (along an inner axis too); a split of a
// value known only at run time stays.
// CHECK-LABEL: func @split
// CHECK-SAME: (%[[X:.*]]: tensor<4xi64>)
func.func @split(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<1xi64>, tensor<3xi64>, tensor<2x1xi64>, tensor<2x2xi64>, tensor<2xi64>) {
  %0 = tcc.split %x axis = 0 : tensor<4xi64> -> tensor<4xi64>
  %c = tcc.constant dense<[2, 3, 4, 5]> : tensor<4xi64>
  // CHECK-DAG: %[[A:.*]] = tcc.constant dense<2> : tensor<1xi64>
  // CHECK-DAG: %[[B:.*]] = tcc.constant dense<[3, 4, 5]> : tensor<3xi64>
  %1:2 = tcc.split %c axis = 0 : tensor<4xi64> -> tensor<1xi64>, tensor<3xi64>
  %m = tcc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  // CHECK-DAG: %[[C:.*]] = tcc.constant dense<{{\[}}[1], [4]]> : tensor<2x1xi64>
  // CHECK-DAG: %[[D:.*]] = tcc.constant dense<{{\[}}[2, 3], [5, 6]]> : tensor<2x2xi64>
  %2:2 = tcc.split %m axis = 1 : tensor<2x3xi64> -> tensor<2x1xi64>, tensor<2x2xi64>
  // CHECK: %[[R:.*]]:2 = tcc.split %[[X]] axis = 0
  %3:2 = tcc.split %x axis = 0 : tensor<4xi64> -> tensor<2xi64>, tensor<2xi64>
  // CHECK: return %[[X]], %[[A]], %[[B]], %[[C]], %[[D]], %[[R]]#0
  return %0, %1#0, %1#1, %2#0, %2#1, %3#0 : tensor<4xi64>, tensor<1xi64>, tensor<3xi64>, tensor<2x1xi64>, tensor<2x2xi64>, tensor<2xi64>
}

// -----

// Tests that padding by nothing folds.
// CHECK-LABEL: func @pad_nothing
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
func.func @pad_nothing(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = tcc.pad %x low = [0] high = [0] mode = edge : tensor<3xf32> -> tensor<3xf32>
  // CHECK: return %[[X]]
  return %0 : tensor<3xf32>
}

// -----

// Tests that sqrt, rsqrt and reciprocal of small float constants fold.
// CHECK-LABEL: func @unary_float_folds
// CHECK-DAG: %[[S:.*]] = tcc.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[R:.*]] = tcc.constant dense<[5.000000e-01, 0.333333343]> : tensor<2xf32>
// CHECK-DAG: %[[Q:.*]] = tcc.constant dense<[2.500000e-01, 0.111111112]> : tensor<2xf32>
// CHECK: return %[[S]], %[[R]], %[[Q]]
func.func @unary_float_folds() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %c = tcc.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = tcc.sqrt %c : tensor<2xf32>
  %1 = tcc.rsqrt %c : tensor<2xf32>
  %2 = tcc.reciprocal %c : tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Tests that max and min of constants fold, NaN-propagating for floats and
// signed or unsigned by the element type for integers.
// CHECK-LABEL: func @max_min
func.func @max_min() -> (tensor<3xf32>, tensor<2xi64>, tensor<2xui8>) {
  %a = tcc.constant dense<[1.0, 0x7FC00000, -3.0]> : tensor<3xf32>
  %b = tcc.constant dense<2.0> : tensor<f32>
  // CHECK-DAG: tcc.constant dense<[2.000000e+00, 0x7FC00000, 2.000000e+00]> : tensor<3xf32>
  %0 = tcc.max %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %i = tcc.constant dense<[-1, 5]> : tensor<2xi64>
  %j = tcc.constant dense<[0, 3]> : tensor<2xi64>
  // CHECK-DAG: tcc.constant dense<[-1, 3]> : tensor<2xi64>
  %1 = tcc.min %i, %j : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %u = tcc.constant dense<[255, 1]> : tensor<2xui8>
  %v = tcc.constant dense<[1, 2]> : tensor<2xui8>
  // CHECK-DAG: tcc.constant dense<[255, 2]> : tensor<2xui8>
  %2 = tcc.max %u, %v : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  // CHECK-NOT: tcc.max
  // CHECK-NOT: tcc.min
  return %0, %1, %2 : tensor<3xf32>, tensor<2xi64>, tensor<2xui8>
}

// -----

// Tests that comparisons of constants fold with broadcasting, and that NaN
// compares unordered (only `ne` holds).
// CHECK-LABEL: func @cmp
func.func @cmp() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<2xi1>) {
  %a = tcc.constant dense<[1, -1, 7]> : tensor<3xi64>
  %m = tcc.constant dense<-1> : tensor<i64>
  // CHECK-DAG: tcc.constant dense<[false, true, false]> : tensor<3xi1>
  %0 = tcc.cmp eq, %a, %m : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %f = tcc.constant dense<[1.0, 0x7FC00000, 3.0]> : tensor<3xf32>
  %g = tcc.constant dense<2.0> : tensor<f32>
  // CHECK-DAG: tcc.constant dense<[false, false, true]> : tensor<3xi1>
  %1 = tcc.cmp ge, %f, %g : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  // CHECK-DAG: tcc.constant dense<true> : tensor<3xi1>
  %2 = tcc.cmp ne, %f, %g : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  %u = tcc.constant dense<[200, 3]> : tensor<2xui8>
  %v = tcc.constant dense<100> : tensor<ui8>
  // CHECK-DAG: tcc.constant dense<[true, false]> : tensor<2xi1>
  %3 = tcc.cmp ge, %u, %v : (tensor<2xui8>, tensor<ui8>) -> tensor<2xi1>
  // CHECK-NOT: tcc.cmp
  return %0, %1, %2, %3 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<2xi1>
}

// -----

// Tests that select of three constants picks element by element (ONNX
// Where in shape computations).
// CHECK-LABEL: func @select_constants
func.func @select_constants() -> tensor<3xi64> {
  %c = tcc.constant dense<[true, false, true]> : tensor<3xi1>
  %a = tcc.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = tcc.constant dense<0> : tensor<i64>
  // CHECK: %[[R:.*]] = tcc.constant dense<[1, 0, 3]> : tensor<3xi64>
  %0 = tcc.select %c, %a, %b : (tensor<3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  // CHECK: return %[[R]]
  return %0 : tensor<3xi64>
}

// -----

// Tests that casts of constants fold between floats, integers and bools:
// float to integer truncates, NaN to integer is left to run time.
// CHECK-LABEL: func @cast_constants
func.func @cast_constants() -> (tensor<2xi64>, tensor<2xf32>, tensor<3xi1>, tensor<2xi32>, tensor<2xf16>, tensor<i32>) {
  %f = tcc.constant dense<[2.7, -2.7]> : tensor<2xf32>
  // CHECK-DAG: tcc.constant dense<[2, -2]> : tensor<2xi64>
  %0 = tcc.cast %f : tensor<2xf32> -> tensor<2xi64>
  %i = tcc.constant dense<[-3, 5]> : tensor<2xi64>
  // CHECK-DAG: tcc.constant dense<[-3.000000e+00, 5.000000e+00]> : tensor<2xf32>
  %1 = tcc.cast %i : tensor<2xi64> -> tensor<2xf32>
  %z = tcc.constant dense<[0.0, 0.5, -1.0]> : tensor<3xf32>
  // CHECK-DAG: tcc.constant dense<[false, true, true]> : tensor<3xi1>
  %2 = tcc.cast %z : tensor<3xf32> -> tensor<3xi1>
  %b = tcc.constant dense<[true, false]> : tensor<2xi1>
  // CHECK-DAG: tcc.constant dense<[1, 0]> : tensor<2xi32>
  %3 = tcc.cast %b : tensor<2xi1> -> tensor<2xi32>
  // CHECK-DAG: tcc.constant dense<[2.699220e+00, -2.699220e+00]> : tensor<2xf16>
  %4 = tcc.cast %f : tensor<2xf32> -> tensor<2xf16>
  %n = tcc.constant dense<0x7FC00000> : tensor<f32>
  // CHECK: tcc.cast %{{.*}} : tensor<f32> -> tensor<i32>
  %5 = tcc.cast %n : tensor<f32> -> tensor<i32>
  return %0, %1, %2, %3, %4, %5 : tensor<2xi64>, tensor<2xf32>, tensor<3xi1>, tensor<2xi32>, tensor<2xf16>, tensor<i32>
}

// -----

// Tests that broadcast_to of a small non-splat constant folds.
// CHECK-LABEL: func @broadcast_constant
func.func @broadcast_constant() -> tensor<2x3xi64> {
  %c = tcc.constant dense<[[1], [2]]> : tensor<2x1xi64>
  // CHECK: %[[R:.*]] = tcc.constant dense<{{\[}}[1, 1, 1], [2, 2, 2]]> : tensor<2x3xi64>
  %0 = tcc.broadcast_to %c : tensor<2x1xi64> -> tensor<2x3xi64>
  // CHECK: return %[[R]]
  return %0 : tensor<2x3xi64>
}

// -----

// Tests that concat of constants folds along inner and outer axes.
// CHECK-LABEL: func @concat_constants
func.func @concat_constants() -> (tensor<4xi64>, tensor<2x3xi32>) {
  %a = tcc.constant dense<[1, 2]> : tensor<2xi64>
  %b = tcc.constant dense<[3]> : tensor<1xi64>
  %e = tcc.constant dense<> : tensor<0xi64>
  // CHECK-DAG: tcc.constant dense<[1, 2, 3, 3]> : tensor<4xi64>
  %0 = tcc.concat %a, %b, %e, %b axis = 0 : (tensor<2xi64>, tensor<1xi64>, tensor<0xi64>, tensor<1xi64>) -> tensor<4xi64>
  %c = tcc.constant dense<[[1, 2], [4, 5]]> : tensor<2x2xi32>
  %d = tcc.constant dense<[[3], [6]]> : tensor<2x1xi32>
  // CHECK-DAG: tcc.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %1 = tcc.concat %c, %d axis = 1 : (tensor<2x2xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>
  // CHECK-NOT: tcc.concat
  return %0, %1 : tensor<4xi64>, tensor<2x3xi32>
}

// -----

// Tests that gather from a constant with constant indices folds (negative
// indices count from the end) but not with an index out of range.
// CHECK-LABEL: func @gather_constants
func.func @gather_constants() -> (tensor<i64>, tensor<2x2xi64>, tensor<1xi64>) {
  %s = tcc.constant dense<[1, 3, 224, 224]> : tensor<4xi64>
  %i = tcc.constant dense<-3> : tensor<i64>
  // CHECK-DAG: tcc.constant dense<3> : tensor<i64>
  %0 = tcc.gather %s, %i axis = 0 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %m = tcc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %j = tcc.constant dense<[2, 0]> : tensor<2xi32>
  // CHECK-DAG: tcc.constant dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi64>
  %1 = tcc.gather %m, %j axis = 1 : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<2x2xi64>
  %k = tcc.constant dense<[4]> : tensor<1xi64>
  // CHECK: tcc.gather
  %2 = tcc.gather %s, %k axis = 0 : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0, %1, %2 : tensor<i64>, tensor<2x2xi64>, tensor<1xi64>
}

// -----

// Tests that remainders and bitwise logic on small constants fold (shape
// code of ONNX function bodies uses them).
// CHECK-LABEL: func @fold_logic
func.func @fold_logic() -> (tensor<2xi64>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xf32>) {
  %a = tcc.constant dense<[7, -7]> : tensor<2xi64>
  %b = tcc.constant dense<3> : tensor<i64>
  // CHECK-DAG: tcc.constant dense<[1, 2]> : tensor<2xi64>
  %0 = tcc.rem %a, %b : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %t = tcc.constant dense<[true, false]> : tensor<2xi1>
  %f = tcc.constant dense<[true, true]> : tensor<2xi1>
  // CHECK-DAG: tcc.constant dense<[true, false]> : tensor<2xi1>
  %1 = tcc.and %t, %f : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK-DAG: tcc.constant dense<true> : tensor<2xi1>
  %2 = tcc.or %t, %f : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK-DAG: tcc.constant dense<[false, true]> : tensor<2xi1>
  %3 = tcc.xor %t, %f : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %4 = tcc.not %t : tensor<2xi1>
  %x = tcc.constant dense<[5.5, -5.5]> : tensor<2xf32>
  %y = tcc.constant dense<2.0> : tensor<f32>
  // CHECK-DAG: tcc.constant dense<[1.500000e+00, -1.500000e+00]> : tensor<2xf32>
  %5 = tcc.rem %x, %y : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  // CHECK-NOT: tcc.rem
  // CHECK-NOT: tcc.and
  return %0, %1, %2, %3, %4, %5 : tensor<2xi64>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xf32>
}

// -----

// Tests that a batch norm of a convolution with constant weights folds into
// the convolution: W' = W * g / sqrt(v + eps), b' = (0 - m) * s + b.
// Filter 0: s = 2 / sqrt(3 + 1) = 1, W' = 1, b' = -0.5 + 1 = 0.5.
// Filter 1: s = 3 / sqrt(0 + 1) = 3, W' = 6, b' = -3 + 1 = -2.
// CHECK-LABEL: func @conv_batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x4x4xf32>)
func.func @conv_batch_norm(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = tcc.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %g = tcc.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %b = tcc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = tcc.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = tcc.constant dense<[3.0, 0.0]> : tensor<2xf32>
  // CHECK-DAG: %[[W:.*]] = tcc.constant dense_resource<folded_weight_{{[0-9a-f]+}}> : tensor<2x1x1x1xf32>
  // CHECK-DAG: %[[B:.*]] = tcc.constant dense<[5.000000e-01, -2.000000e+00]> : tensor<2xf32>
  // CHECK: %[[C:.*]] = tcc.conv %[[X]], %[[W]], %[[B]]
  // CHECK-NOT: tcc.batch_norm
  // CHECK: return %[[C]]
  %c = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = tcc.batch_norm %c, %g, %b, %m, %v epsilon = 1.0 : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}
// CHECK: folded_weight_{{[0-9a-f]+}}: "0x040000000000803F0000C040"

// -----

// Tests that a batch norm whose statistics are not constant (training)
// stays.
// CHECK-LABEL: func @conv_batch_norm_live
// CHECK: tcc.batch_norm
func.func @conv_batch_norm_live(%x: tensor<1x1x4x4xf32>, %v: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = tcc.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %g = tcc.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %b = tcc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = tcc.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %c = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = tcc.batch_norm %c, %g, %b, %m, %v epsilon = 1.0 : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Tests that a matmul over an empty contraction (k = 0) folds to zeros, and
// that one with k > 0 stays.
// CHECK-LABEL: func.func @matmul_empty_contraction
// CHECK: %[[Z:.*]] = tcc.constant dense<0.000000e+00> : tensor<5x10xf32>
// CHECK: %[[M:.*]] = tcc.matmul %arg2, %arg3
// CHECK: return %[[Z]], %[[M]]
func.func @matmul_empty_contraction(%a: tensor<5x0xf32>, %b: tensor<0x10xf32>, %c: tensor<5x2xf32>, %d: tensor<2x10xf32>) -> (tensor<5x10xf32>, tensor<5x10xf32>) {
  %0 = tcc.matmul %a, %b : (tensor<5x0xf32>, tensor<0x10xf32>) -> tensor<5x10xf32>
  %1 = tcc.matmul %c, %d : (tensor<5x2xf32>, tensor<2x10xf32>) -> tensor<5x10xf32>
  return %0, %1 : tensor<5x10xf32>, tensor<5x10xf32>
}

// -----

// Tests that a slice of a splat folds to a splat whatever its size (past
// the element limit of folding other constants).
// CHECK-LABEL: func @slice_big_splat
func.func @slice_big_splat() -> tensor<3x4096xf32> {
  // CHECK: %[[C:.*]] = tcc.constant dense<1.500000e+00> : tensor<3x4096xf32>
  // CHECK-NOT: tcc.slice
  // CHECK: return %[[C]]
  %c = tcc.constant dense<1.5> : tensor<8x4096xf32>
  %0 = tcc.slice %c offsets = [2, 0] steps = [1, 1] : tensor<8x4096xf32> -> tensor<3x4096xf32>
  return %0 : tensor<3x4096xf32>
}

// -----

// Tests that the sum of select_scatter-style concatenations (each a value
// between zeros, as the backward of a split makes them) becomes one
// concatenation of the values, cutting only the zero pieces.
// CHECK-LABEL: func @add_concat_zeros
// CHECK-SAME: (%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<1x4xf32>, %[[C:.*]]: tensor<1x4xf32>)
func.func @add_concat_zeros(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>, %c: tensor<1x4xf32>) -> tensor<3x4xf32> {
  // CHECK-NOT: tcc.add
  // CHECK: %[[R:.*]] = tcc.concat %[[A]], %[[B]], %[[C]] axis = 0
  // CHECK-NOT: tcc.add
  // CHECK: return %[[R]]
  %z1 = tcc.constant dense<0.0> : tensor<1x4xf32>
  %z2 = tcc.constant dense<0.0> : tensor<2x4xf32>
  %0 = tcc.concat %a, %z2 axis = 0 : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %1 = tcc.concat %z1, %b, %z1 axis = 0 : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %2 = tcc.concat %z2, %c axis = 0 : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %3 = tcc.add %0, %1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %4 = tcc.add %3, %2 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %4 : tensor<3x4xf32>
}

// -----

// Tests that pieces at the same split points add piece by piece, and that
// a computed piece a cut would fall inside stops the rewrite (it would be
// copied once for each side), as does an add that broadcasts.
// CHECK-LABEL: func @add_concat_pieces
func.func @add_concat_pieces(%a: tensor<1x4xf32>, %b: tensor<2x4xf32>, %c: tensor<1x4xf32>, %d: tensor<2x4xf32>, %e: tensor<3x1xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  // CHECK: %[[S0:.*]] = tcc.add %arg0, %arg2
  // CHECK: %[[S1:.*]] = tcc.add %arg1, %arg3
  // CHECK: %[[R0:.*]] = tcc.concat %[[S0]], %[[S1]] axis = 0
  %0 = tcc.concat %a, %b axis = 0 : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %1 = tcc.concat %c, %d axis = 0 : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %2 = tcc.add %0, %1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: %[[L:.*]] = tcc.concat %arg3, %arg0 axis = 0
  // CHECK: %[[R1:.*]] = tcc.add %[[L]], %{{.*}}
  %3 = tcc.concat %d, %a axis = 0 : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %4 = tcc.add %3, %1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: %[[R2:.*]] = tcc.add %{{.*}}, %arg4 : (tensor<3x4xf32>, tensor<3x1xf32>)
  %5 = tcc.add %0, %e : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  // CHECK: return %[[R0]], %[[R1]], %[[R2]]
  return %2, %4, %5 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Tests that a convolution whose window covers the whole unpadded input
// (squeeze-and-excitation's 1x1 convolutions after a global pool) becomes
// a matmul by the transposed constant weights (1 3 / 2 4: the blob's
// floats), its bias an add; and that one over a larger input and one with
// weights that are not constants stay.
// CHECK-LABEL: func @conv_over_whole_input
// CHECK-DAG: %[[W:.*]] = tcc.constant dense_resource<matmul_weight_{{[0-9a-f]+}}> : tensor<2x2xf32>
// CHECK-DAG: %[[B:.*]] = tcc.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK: %[[X:.*]] = tcc.reshape %arg0 : tensor<3x2x1x1xf32> -> tensor<3x2xf32>
// CHECK: %[[M:.*]] = tcc.matmul %[[X]], %[[W]] : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
// CHECK: %[[S:.*]] = tcc.add %[[M]], %[[B]]
// CHECK: %[[Y:.*]] = tcc.reshape %[[S]] : tensor<3x2xf32> -> tensor<3x2x1x1xf32>
// CHECK: tcc.conv %arg1
// CHECK: tcc.conv %arg0, %arg2
// CHECK: return %[[Y]]
// CHECK: matmul_weight_{{[0-9a-f]+}}: "0x040000000000803F000040400000004000008040"
func.func @conv_over_whole_input(%x: tensor<3x2x1x1xf32>, %big: tensor<1x2x2x2xf32>, %wi: tensor<2x2x1x1xf32>) -> (tensor<3x2x1x1xf32>, tensor<1x2x2x2xf32>, tensor<3x2x1x1xf32>) {
  %w = tcc.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %b = tcc.constant dense<0.5> : tensor<2xf32>
  %0 = tcc.conv %x, %w, %b strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<3x2x1x1xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<3x2x1x1xf32>
  %1 = tcc.conv %big, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %2 = tcc.conv %x, %wi strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<3x2x1x1xf32>, tensor<2x2x1x1xf32>) -> tensor<3x2x1x1xf32>
  return %0, %1, %2 : tensor<3x2x1x1xf32>, tensor<1x2x2x2xf32>, tensor<3x2x1x1xf32>
}

// -----

// A matmul by a broadcast that only stacks copies of a matrix multiplies
// by the matrix (numpy matmul stacks it); a broadcast that changes the
// matrix, or one the result type would not survive, stays.
// CHECK-LABEL: func @matmul_of_stacked_weight
// CHECK-SAME: (%[[X:.*]]: tensor<?x5x4xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[V:.*]]: tensor<1x3xf32>, %{{.*}}: tensor<5x4xf32>)
// CHECK: %[[A:.*]] = tcc.matmul %[[X]], %[[W]] : (tensor<?x5x4xf32>, tensor<4x3xf32>) -> tensor<?x5x3xf32>
// CHECK: %[[VB:.*]] = tcc.broadcast_to %[[V]] : tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK: %[[B:.*]] = tcc.matmul %[[X]], %[[VB]]
// CHECK: %[[WS:.*]] = tcc.broadcast_to %[[W]] : tensor<4x3xf32> -> tensor<7x4x3xf32>
// CHECK: %[[C:.*]] = tcc.matmul %{{.*}}, %[[WS]] : (tensor<5x4xf32>, tensor<7x4x3xf32>) -> tensor<7x5x3xf32>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @matmul_of_stacked_weight(%x: tensor<?x5x4xf32>, %w: tensor<4x3xf32>, %v: tensor<1x3xf32>, %y: tensor<5x4xf32>) -> (tensor<?x5x3xf32>, tensor<?x5x3xf32>, tensor<7x5x3xf32>) {
  %s = tcc.broadcast_to %w : tensor<4x3xf32> -> tensor<?x4x3xf32>
  %a = tcc.matmul %x, %s : (tensor<?x5x4xf32>, tensor<?x4x3xf32>) -> tensor<?x5x3xf32>
  %vb = tcc.broadcast_to %v : tensor<1x3xf32> -> tensor<4x3xf32>
  %b = tcc.matmul %x, %vb : (tensor<?x5x4xf32>, tensor<4x3xf32>) -> tensor<?x5x3xf32>
  %ws = tcc.broadcast_to %w : tensor<4x3xf32> -> tensor<7x4x3xf32>
  %c = tcc.matmul %y, %ws : (tensor<5x4xf32>, tensor<7x4x3xf32>) -> tensor<7x5x3xf32>
  return %a, %b, %c : tensor<?x5x3xf32>, tensor<?x5x3xf32>, tensor<7x5x3xf32>
}

// -----

// Tests that positions of a static size fold to a constant (integers and
// floats) and that dynamic ones stay an op.
// CHECK-LABEL: func @iota
// CHECK-DAG: tcc.constant dense<{{\[}}[0], [1], [2]]> : tensor<3x1xi64>
// CHECK-DAG: tcc.constant dense<{{\[}}[0.000000e+00, 1.000000e+00]]> : tensor<1x2xf32>
// CHECK-DAG: %[[D:.*]] = tcc.iota {dimension = 0 : i64} : tensor<?xi32>
// CHECK: return %{{.*}}, %{{.*}}, %[[D]]
func.func @iota() -> (tensor<3x1xi64>, tensor<1x2xf32>, tensor<?xi32>) {
  %a = tcc.iota {dimension = 0 : i64} : tensor<3x1xi64>
  %b = tcc.iota {dimension = 1 : i64} : tensor<1x2xf32>
  %c = tcc.iota {dimension = 0 : i64} : tensor<?xi32>
  return %a, %b, %c : tensor<3x1xi64>, tensor<1x2xf32>, tensor<?xi32>
}

// -----

// Tests that arithmetic on small f32 blobs folds as on dense constants (a
// batch norm before a convolution: its scale rsqrt(var + eps) * gamma from
// the imported statistics), var = [4, 16] and gamma = [2, 4].
// CHECK-LABEL: func @small_blob_arithmetic
// CHECK: %[[A:.*]] = tcc.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NOT: tcc.rsqrt
// CHECK: return %[[A]]
func.func @small_blob_arithmetic() -> tensor<2xf32> {
  %v = tcc.constant dense_resource<bn_var> : tensor<2xf32>
  %g = tcc.constant dense_resource<bn_gamma> : tensor<2xf32>
  %e = tcc.constant dense<0.0> : tensor<f32>
  %s = tcc.add %v, %e : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %r = tcc.rsqrt %s : tensor<2xf32>
  %a = tcc.mul %r, %g : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      bn_var: "0x040000000000804000008041",
      bn_gamma: "0x040000000000004000008040"
    }
  }
#-}

// -----

// Tests that a transpose moving only dimensions of size 1 becomes a reshape
// (the same elements in the same order), and that one reordering larger
// dimensions stays.
// CHECK-LABEL: func @transpose_of_unit_dims
// CHECK-SAME: (%[[X:.*]]: tensor<5x1x4xf32>)
func.func @transpose_of_unit_dims(%x: tensor<5x1x4xf32>) -> (tensor<1x5x4xf32>, tensor<4x1x5xf32>) {
  // CHECK: %[[R:.*]] = tcc.reshape %[[X]] : tensor<5x1x4xf32> -> tensor<1x5x4xf32>
  %0 = tcc.transpose %x perm = [1, 0, 2] : tensor<5x1x4xf32> -> tensor<1x5x4xf32>
  // CHECK: %[[T:.*]] = tcc.transpose %[[X]] perm = [2, 1, 0]
  %1 = tcc.transpose %x perm = [2, 1, 0] : tensor<5x1x4xf32> -> tensor<4x1x5xf32>
  // CHECK: return %[[R]], %[[T]]
  return %0, %1 : tensor<1x5x4xf32>, tensor<4x1x5xf32>
}

// -----

// Tests that gathers taking the blocks of a fused QKV projection (torch's
// MultiheadAttention: the product's columns viewed as [.., 3, d], that axis
// moved first by a transpose, one gather a block) become one projection a
// block, with its columns of the weights and the bias, and the views
// without the split axis: no gather, no copy of the whole product.
// CHECK-LABEL: func @gathered_projection_blocks
// CHECK-SAME: (%[[X:.*]]: tensor<4x1x3xf32>)
func.func @gathered_projection_blocks(%x: tensor<4x1x3xf32>) -> (tensor<4x1x2xf32>, tensor<4x1x2xf32>, tensor<4x1x2xf32>) {
  %w = tcc.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0, 17.0, 18.0]]> : tensor<3x6xf32>
  %b = tcc.constant dense<[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]> : tensor<6xf32>
  %i0 = tcc.constant dense<0> : tensor<i64>
  %i1 = tcc.constant dense<1> : tensor<i64>
  %i2 = tcc.constant dense<-1> : tensor<i64>
  // CHECK-NOT: tcc.gather
  // CHECK-DAG: %[[B0:.*]] = tcc.constant dense<[5.000000e-01, 1.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[B1:.*]] = tcc.constant dense<[2.500000e+00, 3.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[B2:.*]] = tcc.constant dense<[4.500000e+00, 5.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[P0:.*]] = tcc.matmul %[[X]], %{{.*}} : (tensor<4x1x3xf32>, tensor<3x2xf32>) -> tensor<4x1x2xf32>
  // CHECK-DAG: %[[Q:.*]] = tcc.add %[[P0]], %[[B0]]
  // CHECK-DAG: %[[P1:.*]] = tcc.matmul %[[X]], %{{.*}} : (tensor<4x1x3xf32>, tensor<3x2xf32>) -> tensor<4x1x2xf32>
  // CHECK-DAG: %[[K:.*]] = tcc.add %[[P1]], %[[B1]]
  // CHECK-DAG: %[[P2:.*]] = tcc.matmul %[[X]], %{{.*}} : (tensor<4x1x3xf32>, tensor<3x2xf32>) -> tensor<4x1x2xf32>
  // CHECK-DAG: %[[V:.*]] = tcc.add %[[P2]], %[[B2]]
  %p = tcc.matmul %x, %w : (tensor<4x1x3xf32>, tensor<3x6xf32>) -> tensor<4x1x6xf32>
  %m = tcc.add %p, %b : (tensor<4x1x6xf32>, tensor<6xf32>) -> tensor<4x1x6xf32>
  %r = tcc.reshape %m : tensor<4x1x6xf32> -> tensor<1x4x1x3x2xf32>
  %t = tcc.transpose %r perm = [3, 1, 2, 0, 4] : tensor<1x4x1x3x2xf32> -> tensor<3x4x1x1x2xf32>
  %s = tcc.reshape %t : tensor<3x4x1x1x2xf32> -> tensor<3x4x1x2xf32>
  %q = tcc.gather %s, %i0 axis = 0 : (tensor<3x4x1x2xf32>, tensor<i64>) -> tensor<4x1x2xf32>
  %k = tcc.gather %s, %i1 axis = 0 : (tensor<3x4x1x2xf32>, tensor<i64>) -> tensor<4x1x2xf32>
  %v = tcc.gather %s, %i2 axis = 0 : (tensor<3x4x1x2xf32>, tensor<i64>) -> tensor<4x1x2xf32>
  // CHECK: return %[[Q]], %[[K]], %[[V]]
  return %q, %k, %v : tensor<4x1x2xf32>, tensor<4x1x2xf32>, tensor<4x1x2xf32>
}

// -----

// Tests that the gathers stay when the whole product has another use (the
// blocks would be computed twice), and when the gathered axis is not a
// block of the projection's columns.
// CHECK-LABEL: func @gathered_projection_kept
// CHECK-COUNT-2: tcc.gather
func.func @gathered_projection_kept(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>, tensor<3x2xf32>) {
  %w = tcc.constant dense<1.0> : tensor<3x6xf32>
  %i = tcc.constant dense<1> : tensor<i64>
  %m = tcc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  %r = tcc.reshape %m : tensor<4x6xf32> -> tensor<4x3x2xf32>
  %g = tcc.gather %r, %i axis = 1 : (tensor<4x3x2xf32>, tensor<i64>) -> tensor<4x2xf32>
  %m2 = tcc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  %r2 = tcc.reshape %m2 : tensor<4x6xf32> -> tensor<4x3x2xf32>
  %g2 = tcc.gather %r2, %i axis = 0 : (tensor<4x3x2xf32>, tensor<i64>) -> tensor<3x2xf32>
  return %g, %m, %g2 : tensor<4x2xf32>, tensor<4x6xf32>, tensor<3x2xf32>
}

// -----

// Tests that a projection split along its columns (GPT-2's c_attn cut into
// Q, K and V) becomes one projection a piece, with its columns of the
// weights and the bias; a split along another axis stays.
// CHECK-LABEL: func @split_projection
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>)
func.func @split_projection(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x4xf32>, tensor<1x6xf32>, tensor<3x6xf32>) {
  %w = tcc.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0, 17.0, 18.0]]> : tensor<3x6xf32>
  %b = tcc.constant dense<[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]> : tensor<6xf32>
  // CHECK-NOT: tcc.split %{{.*}} axis = 1
  // CHECK-DAG: %[[B0:.*]] = tcc.constant dense<[5.000000e-01, 1.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[B1:.*]] = tcc.constant dense<[2.500000e+00, 3.500000e+00, 4.500000e+00, 5.500000e+00]> : tensor<4xf32>
  // CHECK-DAG: %[[P0:.*]] = tcc.matmul %[[X]], %{{.*}} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  // CHECK-DAG: %[[A:.*]] = tcc.add %[[P0]], %[[B0]]
  // CHECK-DAG: %[[P1:.*]] = tcc.matmul %[[X]], %{{.*}} : (tensor<4x3xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  // CHECK-DAG: %[[C:.*]] = tcc.add %[[P1]], %[[B1]]
  %p = tcc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  %m = tcc.add %p, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %0:2 = tcc.split %m axis = 1 : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x4xf32>
  // CHECK: tcc.split %{{.*}} axis = 0
  %n = tcc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  %1:2 = tcc.split %n axis = 0 : tensor<4x6xf32> -> tensor<1x6xf32>, tensor<3x6xf32>
  // CHECK: return %[[A]], %[[C]]
  return %0#0, %0#1, %1#0, %1#1 : tensor<4x2xf32>, tensor<4x4xf32>, tensor<1x6xf32>, tensor<3x6xf32>
}

// -----

// Tests that a residual added to a product's view that only adds a unit
// dimension moves before the view (the product's kernel then adds it), and
// that a view beside another product's view stays (neither moves: the
// rewrite must not undo itself).
// CHECK-LABEL: func @add_after_product_view
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3x5xf32>, %[[B:.*]]: tensor<5xf32>, %[[R:.*]]: tensor<1x4x5xf32>)
func.func @add_after_product_view(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>, %b: tensor<5xf32>, %r: tensor<1x4x5xf32>) -> (tensor<1x4x5xf32>, tensor<1x4x5xf32>) {
  // CHECK: %[[P:.*]] = tcc.matmul %[[X]], %[[W]]
  // CHECK: %[[PB:.*]] = tcc.add %[[P]], %[[B]]
  // CHECK: %[[RR:.*]] = tcc.reshape %[[R]] : tensor<1x4x5xf32> -> tensor<4x5xf32>
  // CHECK: %[[S:.*]] = tcc.add %[[RR]], %[[PB]] : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: %[[V:.*]] = tcc.reshape %[[S]] : tensor<4x5xf32> -> tensor<1x4x5xf32>
  %p = tcc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %pb = tcc.add %p, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %v = tcc.reshape %pb : tensor<4x5xf32> -> tensor<1x4x5xf32>
  %0 = tcc.add %r, %v : (tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  // CHECK: %[[Q1:.*]] = tcc.matmul %[[X]], %[[W]]
  // CHECK: %[[V1:.*]] = tcc.reshape %[[Q1]]
  // CHECK: %[[Q2:.*]] = tcc.matmul %[[X]], %[[W]]
  // CHECK: %[[V2:.*]] = tcc.reshape %[[Q2]]
  // CHECK: %[[T:.*]] = tcc.add %[[V1]], %[[V2]] : (tensor<1x4x5xf32>, tensor<1x4x5xf32>)
  %q1 = tcc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %v1 = tcc.reshape %q1 : tensor<4x5xf32> -> tensor<1x4x5xf32>
  %q2 = tcc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %v2 = tcc.reshape %q2 : tensor<4x5xf32> -> tensor<1x4x5xf32>
  %1 = tcc.add %v1, %v2 : (tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  // CHECK: return %[[V]], %[[T]]
  return %0, %1 : tensor<1x4x5xf32>, tensor<1x4x5xf32>
}
