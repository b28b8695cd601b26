// RUN: tcc-opt %s --split-input-file --tcc-pad-dynamic-dims="min-bucket=2" | FileCheck %s

// Attention over a dynamic sequence: buckets 4, 3 and 2 (powers of two, the
// sizes halfway between them, the bound), largest first, each taking the
// run's size as a last tensor<i64> input. The scores are masked with -inf
// along the keys before the softmax; the softmax's zeros and the input's
// zero padding need no mask before the second contraction; a value computed
// from the input (relu) does.
// CHECK: module attributes {{.*}}tcc.padded = {buckets = array<i64: 4, 3, 2>, inputs = [array<i64: 1>], max = 4 : i64, min = 1 : i64, name = "seq", outputs = [array<i64: 1>, array<i64: 1>]}
// CHECK-NOT: func.func @main(
// CHECK-LABEL: func.func @main_pad4
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32> {tcc.dims = ["", "seq", ""], tcc.name = "x"}, %[[N:.*]]: tensor<i64> {tcc.name = "seq"}) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK-DAG: %[[ROWS:.*]] = tcc.constant dense<{{\[\[\[}}0], [1], [2], [3]]]> : tensor<1x4x1xi64>
// CHECK-DAG: %[[ROWV:.*]] = tcc.cmp lt, %[[ROWS]], %[[N]] : (tensor<1x4x1xi64>, tensor<i64>) -> tensor<1x4x1xi1>
// CHECK-DAG: %[[KEYS:.*]] = tcc.constant dense<{{\[\[\[}}0, 1, 2, 3]]]> : tensor<1x1x4xi64>
// CHECK-DAG: %[[KEYV:.*]] = tcc.cmp lt, %[[KEYS]], %[[N]] : (tensor<1x1x4xi64>, tensor<i64>) -> tensor<1x1x4xi1>
// CHECK: %[[S:.*]] = tcc.matmul %[[X]], %{{.*}} -> tensor<2x4x4xf32>
// CHECK: %[[NEGINF:.*]] = tcc.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[MS:.*]] = tcc.select %[[KEYV]], %[[S]], %[[NEGINF]]
// CHECK: %[[P:.*]] = tcc.softmax %[[MS]] axis = 2 : tensor<2x4x4xf32>
// CHECK: %[[C:.*]] = tcc.matmul %[[P]], %[[X]] : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[R:.*]] = tcc.relu %[[X]] : tensor<2x4x8xf32>
// CHECK: %[[ZERO:.*]] = tcc.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[MR:.*]] = tcc.select %[[ROWV]], %[[R]], %[[ZERO]] : (tensor<1x4x1xi1>, tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
// CHECK: %[[C2:.*]] = tcc.matmul %[[P]], %[[MR]]
// CHECK: return %[[C]], %[[C2]]
// CHECK-LABEL: func.func @main_pad3
// CHECK-SAME: tensor<2x3x8xf32>
// CHECK: tcc.softmax {{.*}} : tensor<2x3x3xf32>
// CHECK-LABEL: func.func @main_pad2
// CHECK-SAME: tensor<2x2x8xf32>
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 4>}} {
  func.func @main(%x: tensor<2x?x8xf32> {tcc.name = "x", tcc.dims = ["", "seq", ""]}) -> (tensor<2x?x8xf32>, tensor<2x?x8xf32>) {
    %t = tcc.transpose %x perm = [0, 2, 1] : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
    %s = tcc.matmul %x, %t : (tensor<2x?x8xf32>, tensor<2x8x?xf32>) -> tensor<2x?x?xf32>
    %p = tcc.softmax %s axis = 2 : tensor<2x?x?xf32>
    %c = tcc.matmul %p, %x : (tensor<2x?x?xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
    %r = tcc.relu %x : tensor<2x?x8xf32>
    %c2 = tcc.matmul %p, %r : (tensor<2x?x?xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
    return %c, %c2 : tensor<2x?x8xf32>, tensor<2x?x8xf32>
  }
}

// -----

// A leading dimension that a reduction mixes is padded, not run as slabs.
// A mean over it is the masked sum over n (times the rest of the reduced
// elements, here 8); a max is masked with -inf, a product with 1. A bound
// below min-bucket is the one bucket.
// CHECK: tcc.padded = {buckets = array<i64: 1>
// CHECK-LABEL: func.func @main_pad1
// CHECK-SAME: (%[[X:.*]]: tensor<1x8xf32> {tcc.dims = ["len", ""]}, %[[N:.*]]: tensor<i64> {tcc.name = "len"})
// CHECK-DAG: %[[POS:.*]] = tcc.constant dense<0> : tensor<1x1xi64>
// CHECK-DAG: %[[V:.*]] = tcc.cmp lt, %[[POS]], %[[N]]
// CHECK: %[[E:.*]] = tcc.exp %[[X]]
// CHECK: %[[ME:.*]] = tcc.select %[[V]], %[[E]], %{{.*}} : (tensor<1x1xi1>, tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
// CHECK: %[[SUM:.*]] = tcc.reduce_sum %[[ME]] axes = [0, 1] : tensor<1x8xf32> -> tensor<f32>
// CHECK: %[[NF:.*]] = tcc.cast %[[N]] : tensor<i64> -> tensor<f32>
// CHECK: %[[REST:.*]] = tcc.constant dense<8.000000e+00> : tensor<f32>
// CHECK: %[[COUNT:.*]] = tcc.mul %[[NF]], %[[REST]]
// CHECK: %[[MEAN:.*]] = tcc.div %[[SUM]], %[[COUNT]]
// CHECK-NOT: tcc.reduce_mean
// CHECK: %[[LOW:.*]] = tcc.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[MM:.*]] = tcc.select %[[V]], %[[E]], %[[LOW]]
// CHECK: tcc.reduce_max %[[MM]] axes = [0]
// CHECK: %[[ONE:.*]] = tcc.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[MP:.*]] = tcc.select %[[V]], %[[E]], %[[ONE]]
// CHECK: tcc.reduce_prod %[[MP]] axes = [0]
module attributes {tcc.dim_bounds = {len = array<i64: 1, 1>}} {
  func.func @main(%x: tensor<?x8xf32> {tcc.dims = ["len", ""]}) -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>) {
    %e = tcc.exp %x : tensor<?x8xf32>
    %m = tcc.reduce_mean %e axes = [0, 1] : tensor<?x8xf32> -> tensor<f32>
    %x1 = tcc.reduce_max %e axes = [0] : tensor<?x8xf32> -> tensor<8xf32>
    %p = tcc.reduce_prod %e axes = [0] : tensor<?x8xf32> -> tensor<8xf32>
    return %m, %x1, %p : tensor<f32>, tensor<8xf32>, tensor<8xf32>
  }
}

// -----

// A reshape that merges the sequence with the static dimensions around it
// keeps track of where it is: in [2*S*3] the position of element i is
// (i / 3) % S. A value made by views is zero-masked at their source (rows
// of [2, S, 3], not a strided copy), the views made again. Heads split out
// of the features leave it a dimension of its own. The first token (a
// prefix every run holds) is a static slice.
// CHECK-LABEL: func.func @main_pad2
// CHECK-DAG: %[[POS:.*]] = tcc.constant dense<[0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]> : tensor<12xi64>
// CHECK-DAG: %[[V:.*]] = tcc.cmp lt, %[[POS]], %{{.*}} : (tensor<12xi64>, tensor<i64>) -> tensor<12xi1>
// CHECK-DAG: %[[ROWS:.*]] = tcc.cmp lt, %{{.*}}, %{{.*}} : (tensor<1x2x1xi64>, tensor<i64>) -> tensor<1x2x1xi1>
// CHECK: %[[R:.*]] = tcc.relu
// CHECK: %[[FLAT:.*]] = tcc.reshape %[[R]] : tensor<2x2x3xf32> -> tensor<12xf32>
// CHECK: %[[E:.*]] = tcc.exp %[[FLAT]]
// CHECK: tcc.select %[[V]], %[[E]], %{{.*}} : (tensor<12xi1>, tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
// CHECK: tcc.reduce_sum {{.*}} axes = [0] : tensor<12xf32> -> tensor<f32>
// CHECK: %[[MR:.*]] = tcc.select %[[ROWS]], %[[R]], %{{.*}} : (tensor<1x2x1xi1>, tensor<2x2x3xf32>, tensor<f32>) -> tensor<2x2x3xf32>
// CHECK: %[[MF:.*]] = tcc.reshape %[[MR]] : tensor<2x2x3xf32> -> tensor<12xf32>
// CHECK: tcc.reduce_sum %[[MF]] axes = [0]
// CHECK: tcc.reshape %{{.*}} : tensor<2x2x6xf32> -> tensor<2x2x2x3xf32>
// CHECK: tcc.slice %{{.*}} : tensor<2x2x6xf32> -> tensor<2x1x6xf32>
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 2>}} {
  func.func @main(%x: tensor<2x?x3xf32> {tcc.dims = ["", "seq", ""]}, %y: tensor<2x?x6xf32> {tcc.dims = ["", "seq", ""]}) -> (tensor<f32>, tensor<f32>, tensor<2x?x2x3xf32>, tensor<2x1x6xf32>) {
    %r = tcc.relu %x : tensor<2x?x3xf32>
    %f = tcc.reshape %r : tensor<2x?x3xf32> -> tensor<?xf32>
    %e = tcc.exp %f : tensor<?xf32>
    %s = tcc.reduce_sum %e axes = [0] : tensor<?xf32> -> tensor<f32>
    %s2 = tcc.reduce_sum %f axes = [0] : tensor<?xf32> -> tensor<f32>
    %h = tcc.reshape %y : tensor<2x?x6xf32> -> tensor<2x?x2x3xf32>
    %first = tcc.slice %y offsets = [0, 0, 0] steps = [1, 1, 1] : tensor<2x?x6xf32> -> tensor<2x1x6xf32>
    return %s, %s2, %h, %first : tensor<f32>, tensor<f32>, tensor<2x?x2x3xf32>, tensor<2x1x6xf32>
  }
}

// -----

// Beside a batch (a dynamic dimension that only leads inputs), the batch
// stays dynamic for tcc-specialize-batch; heads split from the features
// and stacks regrouped ([B*2, S, S] -> [B, 2, S, S]) keep the sequence;
// the batch is not in tcc.padded's dimensions. Zero padding survives
// reshapes and transposes: the softmax's and the input's need no mask
// before the second contraction.
// CHECK: tcc.padded = {buckets = array<i64: 4, 3, 2>, inputs = [array<i64: 1>], max = 4 : i64, min = 1 : i64, name = "seq", outputs = [array<i64: 1>]}
// CHECK-LABEL: func.func @main_pad4
// CHECK-SAME: (%{{.*}}: tensor<?x4x4xf32> {{.*}}, %{{.*}}: tensor<i64> {tcc.name = "seq"}) -> tensor<?x4x4xf32>
// CHECK: tcc.reshape %{{.*}} : tensor<?x4x4xf32> -> tensor<?x4x2x2xf32>
// CHECK: tcc.transpose {{.*}} -> tensor<?x2x4x2xf32>
// CHECK: tcc.reshape %{{.*}} : tensor<?x2x4x2xf32> -> tensor<?x4x2xf32>
// CHECK: tcc.matmul {{.*}} -> tensor<?x4x4xf32>
// CHECK: tcc.reshape %{{.*}} : tensor<?x4x4xf32> -> tensor<?x2x4x4xf32>
// CHECK: tcc.select {{.*}} -> tensor<?x2x4x4xf32>
// CHECK: tcc.softmax {{.*}} : tensor<?x2x4x4xf32>
// CHECK-NOT: tcc.select
// CHECK: return
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 4>}} {
  func.func @main(%x: tensor<?x?x4xf32> {tcc.dims = ["batch", "seq", ""]}) -> tensor<?x?x4xf32> {
    %h = tcc.reshape %x : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
    %t = tcc.transpose %h perm = [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
    %q = tcc.reshape %t : tensor<?x2x?x2xf32> -> tensor<?x?x2xf32>
    %k = tcc.transpose %q perm = [0, 2, 1] : tensor<?x?x2xf32> -> tensor<?x2x?xf32>
    %s = tcc.matmul %q, %k : (tensor<?x?x2xf32>, tensor<?x2x?xf32>) -> tensor<?x?x?xf32>
    %s4 = tcc.reshape %s : tensor<?x?x?xf32> -> tensor<?x2x?x?xf32>
    %p = tcc.softmax %s4 axis = 3 : tensor<?x2x?x?xf32>
    %p3 = tcc.reshape %p : tensor<?x2x?x?xf32> -> tensor<?x?x?xf32>
    %c = tcc.matmul %p3, %q : (tensor<?x?x?xf32>, tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
    %c4 = tcc.reshape %c : tensor<?x?x2xf32> -> tensor<?x2x?x2xf32>
    %ct = tcc.transpose %c4 perm = [0, 2, 1, 3] : tensor<?x2x?x2xf32> -> tensor<?x?x2x2xf32>
    %o = tcc.reshape %ct : tensor<?x?x2x2xf32> -> tensor<?x?x4xf32>
    return %o : tensor<?x?x4xf32>
  }
}

// -----

// A causal mask built from positions over the sequence beside a batch (the
// exporters' ones(S, S) -> Trilu -> Where): tcc.iota and the broadcast of
// ones take the sequence's digit from the scores they meet some ops later,
// not the batch's; each bucket's positions are constants.
// CHECK-LABEL: func.func @main_pad4
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32> {{.*}}, %[[N:.*]]: tensor<i64> {tcc.name = "seq"}) -> tensor<?x4x8xf32>
// CHECK-DAG: %[[ONES:.*]] = tcc.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<4x4xf32>
// CHECK-DAG: %[[J:.*]] = tcc.constant dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>
// CHECK-DAG: %[[I:.*]] = tcc.constant dense<{{\[\[}}0], [1], [2], [3]]> : tensor<4x1xi64>
// CHECK: %[[D:.*]] = tcc.sub %[[J]], %[[I]] : (tensor<1x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi64>
// CHECK: %[[TRI:.*]] = tcc.select %{{.*}}, %[[ONES]], %{{.*}} : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK: tcc.softmax %{{.*}} axis = 2 : tensor<?x4x4xf32>
// CHECK-NOT: tcc.iota
// CHECK-LABEL: func.func @main_pad3
// CHECK: tcc.constant dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi64>
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 4>}} {
  func.func @main(%x: tensor<?x?x8xf32> {tcc.dims = ["batch", "seq", ""]}) -> tensor<?x?x8xf32> {
    %t = tcc.transpose %x perm = [0, 2, 1] : tensor<?x?x8xf32> -> tensor<?x8x?xf32>
    %s = tcc.matmul %x, %t : (tensor<?x?x8xf32>, tensor<?x8x?xf32>) -> tensor<?x?x?xf32>
    %one = tcc.constant dense<1.0> : tensor<1x1xf32>
    %ones = tcc.broadcast_to %one : tensor<1x1xf32> -> tensor<?x?xf32>
    %j = tcc.iota {dimension = 1 : i64} : tensor<1x?xi64>
    %i = tcc.iota {dimension = 0 : i64} : tensor<?x1xi64>
    %d = tcc.sub %j, %i : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi64>
    %zero = tcc.constant dense<0> : tensor<i64>
    %keep = tcc.cmp le, %d, %zero : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    %fzero = tcc.constant dense<0.0> : tensor<f32>
    %tri = tcc.select %keep, %ones, %fzero : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    %masked = tcc.cmp eq, %tri, %fzero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
    %ninf = tcc.constant dense<0xFF800000> : tensor<f32>
    %ms = tcc.select %masked, %ninf, %s : (tensor<?x?xi1>, tensor<f32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    %p = tcc.softmax %ms axis = 2 : tensor<?x?x?xf32>
    %c = tcc.matmul %p, %x : (tensor<?x?x?xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    return %c : tensor<?x?x8xf32>
  }
}

// -----

// A fixed dimension cut to the run's size (a causal mask buffer,
// bias[:T, :T]): each bucket takes its first N.
// CHECK-LABEL: func.func @main_pad4
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32> {{.*}}, %[[M:.*]]: tensor<8x8xf32>, %{{.*}}: tensor<i64> {tcc.name = "seq"})
// CHECK: %[[S:.*]] = tcc.slice %[[M]] offsets = [0, 0] steps = [1, 1] : tensor<8x8xf32> -> tensor<4x4xf32>
// CHECK: tcc.mul %[[X]], %[[S]] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 4>}} {
  func.func @main(%x: tensor<?x?xf32> {tcc.dims = ["seq", "seq"]}, %m: tensor<8x8xf32>) -> tensor<?x?xf32> {
    %s = tcc.slice %m offsets = [0, 0] steps = [1, 1] : tensor<8x8xf32> -> tensor<?x?xf32>
    %0 = tcc.mul %x, %s : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
}

// -----

// Attention's [S, B, D] layout beside a batch: [S*B, D] holds the sequence
// with the batch inside each position, a dynamic dimension; a mask along it
// splits it into [S, B] (views) to mask S.
// CHECK-LABEL: func.func @main_pad2
// CHECK: %[[T:.*]] = tcc.transpose %{{.*}} perm = [1, 0, 2] : tensor<?x2x4xf32> -> tensor<2x?x4xf32>
// CHECK: %[[M:.*]] = tcc.reshape %[[T]] : tensor<2x?x4xf32> -> tensor<?x4xf32>
// CHECK: %[[E:.*]] = tcc.exp %[[M]]
// CHECK: %[[SPLIT:.*]] = tcc.reshape %[[E]] : tensor<?x4xf32> -> tensor<2x?x4xf32>
// CHECK: %[[SEL:.*]] = tcc.select %{{.*}}, %[[SPLIT]], %{{.*}} : (tensor<2x1x1xi1>, tensor<2x?x4xf32>, tensor<f32>) -> tensor<2x?x4xf32>
// CHECK: %[[JOIN:.*]] = tcc.reshape %[[SEL]] : tensor<2x?x4xf32> -> tensor<?x4xf32>
// CHECK: tcc.reduce_sum %[[JOIN]] axes = [0]
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 2>}} {
  func.func @main(%x: tensor<?x?x4xf32> {tcc.dims = ["batch", "seq", ""]}) -> tensor<4xf32> {
    %t = tcc.transpose %x perm = [1, 0, 2] : tensor<?x?x4xf32> -> tensor<?x?x4xf32>
    %m = tcc.reshape %t : tensor<?x?x4xf32> -> tensor<?x4xf32>
    %e = tcc.exp %m : tensor<?x4xf32>
    %s = tcc.reduce_sum %e axes = [0] : tensor<?x4xf32> -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

// A static graph, and one whose only dynamic dimension leads every input
// (a batch, tcc-specialize-batch's), are left alone.
// CHECK-NOT: tcc.padded
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<?x4xf32>
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tcc.relu %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A size the graph computes (tcc.trim, e.g. NonZero's count): one bucket,
// the bound; past the trim the value is the untrimmed one, masked with the
// count where it is reduced; the count is returned last, named.
// CHECK: tcc.padded = {buckets = array<i64: 6>, computed, computed_max = array<i64: 6>, computed_names = ["y"], inputs = [array<i64>], max = 6 : i64, min = 0 : i64, name = "y", output_symbols = [array<i64: 0>, array<i64>], outputs = [array<i64: 0>, array<i64>]}
// CHECK-LABEL: func.func @main_pad6
// CHECK-SAME: (%[[X:.*]]: tensor<6xf32>) -> (tensor<6xf32>, tensor<f32>, tensor<i64> {tcc.name = "y"})
// CHECK: %[[N:.*]] = tcc.reduce_sum
// CHECK: %[[POS:.*]] = tcc.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// CHECK: %[[V:.*]] = tcc.cmp lt, %[[POS]], %[[N]]
// CHECK: %[[R:.*]] = tcc.relu %[[X]]
// CHECK: %[[M:.*]] = tcc.select %[[V]], %[[R]], %{{.*}}
// CHECK: %[[S:.*]] = tcc.reduce_sum %[[M]]
// CHECK: return %[[R]], %[[S]], %[[N]] : tensor<6xf32>, tensor<f32>, tensor<i64>
module {
  func.func @main(%x: tensor<6xf32>) -> (tensor<?xf32>, tensor<f32>) {
    %c = tcc.cast %x : tensor<6xf32> -> tensor<6xi64>
    %n = tcc.reduce_sum %c axes = [0] : tensor<6xi64> -> tensor<i64>
    %r = tcc.relu %x : tensor<6xf32>
    %t = tcc.trim %r, %n {dimension = 0 : i64, name = "y"} : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>
    %s = tcc.reduce_sum %t axes = [0] : tensor<?xf32> -> tensor<f32>
    return %t, %s : tensor<?xf32>, tensor<f32>
  }
}

// -----

// Two sizes the graph computes (a Pad's two dimensions): each its own
// symbol at its own bound, masked with its own count (a sum over one, a
// mean over both divides by their product), both returned in order.
// CHECK: tcc.padded = {buckets = array<i64: 4>, computed, computed_max = array<i64: 4, 6>, computed_names = ["y_0", "y_1"], {{.*}}output_symbols = [array<i64: 0, 1>, array<i64: 0>, array<i64>], outputs = [array<i64: 0, 1>, array<i64: 0>, array<i64>]}
// CHECK-LABEL: func.func @main_pad4
// CHECK-SAME: -> (tensor<4x6xf32>, tensor<4xf32>, tensor<f32>, tensor<i64> {tcc.name = "y_0"}, tensor<i64> {tcc.name = "y_1"})
// CHECK: %[[P0:.*]] = tcc.constant dense<{{\[}}[0], [1], [2], [3]]> : tensor<4x1xi64>
// CHECK: %[[V0:.*]] = tcc.cmp lt, %[[P0]], %arg1
// CHECK: %[[P1:.*]] = tcc.constant dense<{{\[}}[0, 1, 2, 3, 4, 5]]> : tensor<1x6xi64>
// CHECK: %[[V1:.*]] = tcc.cmp lt, %[[P1]], %arg2
// CHECK: %[[R:.*]] = tcc.relu %arg0
// CHECK: %[[M1:.*]] = tcc.select %[[V1]], %[[R]]
// CHECK: %[[S:.*]] = tcc.reduce_sum %[[M1]] axes = [1]
// CHECK: %[[BOTH:.*]] = tcc.and %[[V0]], %[[V1]]
// CHECK: %[[M:.*]] = tcc.select %[[BOTH]], %[[R]]
// CHECK: %[[SUM:.*]] = tcc.reduce_sum %[[M]] axes = [0, 1]
// CHECK: %[[C0:.*]] = tcc.cast %arg1 : tensor<i64> -> tensor<f32>
// CHECK: %[[C1:.*]] = tcc.cast %arg2 : tensor<i64> -> tensor<f32>
// CHECK: %[[C:.*]] = tcc.mul %[[C0]], %[[C1]]
// CHECK: %[[MEAN:.*]] = tcc.div %[[SUM]], %{{.*}}
// CHECK: return %[[R]], %[[S]], %[[MEAN]], %arg1, %arg2
module {
  func.func @main(%x: tensor<4x6xf32>, %m: tensor<i64>, %n: tensor<i64>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<f32>) {
    %r = tcc.relu %x : tensor<4x6xf32>
    %a = tcc.trim %r, %m {dimension = 0 : i64, name = "y_0"} : (tensor<4x6xf32>, tensor<i64>) -> tensor<?x6xf32>
    %t = tcc.trim %a, %n {dimension = 1 : i64, name = "y_1"} : (tensor<?x6xf32>, tensor<i64>) -> tensor<?x?xf32>
    %s = tcc.reduce_sum %t axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
    %e = tcc.reduce_mean %t axes = [0, 1] : tensor<?x?xf32> -> tensor<f32>
    return %t, %s, %e : tensor<?x?xf32>, tensor<?xf32>, tensor<f32>
  }
}
