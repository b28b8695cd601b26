// RUN: tcc-opt %s --allow-unregistered-dialect --tcc-test-build | FileCheck %s

// Ops made by TccBuilder without result types carry the types their own
// inference gives (the rules the verifiers check).

// Tests that elementwise ops infer the broadcast shape: their operands'
// element type, i1 for comparisons, the branches' for select.
// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x1x3xf32>, %b: tensor<4x1xf32>, %c: tensor<4x3xi1>) {
  // CHECK: tcc.add %{{.*}}, %{{.*}} : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>
  "test.build"(%a, %b) {op = "tcc.add"} : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> ()
  // CHECK: tcc.cmp lt, %{{.*}}, %{{.*}} : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xi1>
  "test.build"(%a, %b) {op = "tcc.cmp", attrs = {predicate = 2 : i32}} : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> ()
  // CHECK: tcc.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x3xi1>, tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>
  "test.build"(%c, %a, %b) {op = "tcc.select"} : (tensor<4x3xi1>, tensor<2x1x3xf32>, tensor<4x1xf32>) -> ()
  // Ops whose result type is their operand's need no inference of their own.
  // CHECK: tcc.exp %{{.*}} : tensor<4x1xf32>
  "test.build"(%b) {op = "tcc.exp"} : (tensor<4x1xf32>) -> ()
  return
}

// Tests that reductions drop or keep the reduced axes and arg-reductions
// give i64 indices.
// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>) {
  // CHECK: tcc.reduce_sum %{{.*}} axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  "test.build"(%x) {op = "tcc.reduce_sum", attrs = {axes = array<i64: 0, 2>}} : (tensor<2x3x4xf32>) -> ()
  // CHECK: tcc.reduce_max %{{.*}} axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  "test.build"(%x) {op = "tcc.reduce_max", attrs = {axes = array<i64: 1>, keepdims}} : (tensor<2x3x4xf32>) -> ()
  // CHECK: tcc.argmax %{{.*}} axis = 2 : tensor<2x3x4xf32> -> tensor<2x3xi64>
  "test.build"(%x) {op = "tcc.argmax", attrs = {axis = 2 : i64}} : (tensor<2x3x4xf32>) -> ()
  return
}

// Tests that contractions, convolutions and pools infer their output sizes.
// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<8x1x5x3xf32>, %b: tensor<7x3x6xf32>, %x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // CHECK: tcc.matmul %{{.*}}, %{{.*}} : (tensor<8x1x5x3xf32>, tensor<7x3x6xf32>) -> tensor<8x7x5x6xf32>
  "test.build"(%a, %b) {op = "tcc.matmul"} : (tensor<8x1x5x3xf32>, tensor<7x3x6xf32>) -> ()
  // CHECK: tcc.conv {{.*}} -> tensor<1x16x16x16xf32>
  "test.build"(%x, %w) {op = "tcc.conv", attrs = {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> ()
  // CHECK: tcc.max_pool {{.*}} ceil_mode : tensor<1x3x32x32xf32> -> tensor<1x3x11x11xf32>
  "test.build"(%x) {op = "tcc.max_pool", attrs = {kernel = array<i64: 3, 3>, strides = array<i64: 3, 3>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode}} : (tensor<1x3x32x32xf32>) -> ()
  return
}

// Tests that shape ops infer from their attributes: a permutation, an axis
// to join along or gather on, pads.
// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %i: tensor<6xi64>) {
  // CHECK: tcc.transpose %{{.*}} perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  "test.build"(%x) {op = "tcc.transpose", attrs = {perm = array<i64: 2, 0, 1>}} : (tensor<2x3x4xf32>) -> ()
  // CHECK: tcc.concat %{{.*}}, %{{.*}} axis = 1 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  "test.build"(%x, %y) {op = "tcc.concat", attrs = {axis = 1 : i64}} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> ()
  // CHECK: tcc.gather %{{.*}}, %{{.*}} axis = 1 : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<2x6x4xf32>
  "test.build"(%x, %i) {op = "tcc.gather", attrs = {axis = 1 : i64}} : (tensor<2x3x4xf32>, tensor<6xi64>) -> ()
  // CHECK: tcc.pad %{{.*}} low = [0, 1, 2] high = [1, 0, 3] mode = constant : tensor<2x3x4xf32> -> tensor<3x4x9xf32>
  "test.build"(%x) {op = "tcc.pad", attrs = {low = array<i64: 0, 1, 2>, high = array<i64: 1, 0, 3>, mode = 0 : i32}} : (tensor<2x3x4xf32>) -> ()
  // Ops whose result shape is a choice take it as given.
  // CHECK: tcc.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  "test.build"(%x) {op = "tcc.reshape", results = [tensor<6x4xf32>]} : (tensor<2x3x4xf32>) -> ()
  return
}

// Tests that normalizations keep their input's type and nll_loss gives the
// target's shape without a reduction, a scalar with one.
// CHECK-LABEL: func.func @normalizations
func.func @normalizations(%x: tensor<2x5x7xf32>, %s: tensor<7xf32>, %c: tensor<5xf32>, %t: tensor<2x7xi64>) {
  // CHECK: tcc.layer_norm {{.*}} -> tensor<2x5x7xf32>
  "test.build"(%x, %s) {op = "tcc.layer_norm", attrs = {axis = 2 : i64, epsilon = 1.0e-05 : f64}} : (tensor<2x5x7xf32>, tensor<7xf32>) -> ()
  // CHECK: tcc.batch_norm {{.*}} -> tensor<2x5x7xf32>
  "test.build"(%x, %c, %c, %c, %c) {op = "tcc.batch_norm", attrs = {epsilon = 1.0e-05 : f64}} : (tensor<2x5x7xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> ()
  // CHECK: tcc.nll_loss %{{.*}}, %{{.*}} reduction = none : (tensor<2x5x7xf32>, tensor<2x7xi64>) -> tensor<2x7xf32>
  "test.build"(%x, %t) {op = "tcc.nll_loss", attrs = {reduction = 0 : i32}} : (tensor<2x5x7xf32>, tensor<2x7xi64>) -> ()
  // CHECK: tcc.nll_loss %{{.*}}, %{{.*}}, %{{.*}} reduction = mean ignore_index = 1 : (tensor<2x5x7xf32>, tensor<2x7xi64>, tensor<5xf32>) -> tensor<f32>
  "test.build"(%x, %t, %c) {op = "tcc.nll_loss", attrs = {reduction = 2 : i32, ignore_index = 1 : i64}} : (tensor<2x5x7xf32>, tensor<2x7xi64>, tensor<5xf32>) -> ()
  return
}
