// RUN: tcc-opt %s --tcc-decompose --split-input-file | FileCheck %s

// Tests that softmax subtracts the row maximum, exponentiates and divides by
// the row sum.
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x10xf32>)
// CHECK: %[[M:.*]] = tcc.reduce_max %[[X]] axes = [1] keepdims : tensor<2x10xf32> -> tensor<2x1xf32>
// CHECK: %[[D:.*]] = tcc.sub %[[X]], %[[M]]
// CHECK: %[[E:.*]] = tcc.exp %[[D]]
// CHECK: %[[S:.*]] = tcc.reduce_sum %[[E]] axes = [1] keepdims
// CHECK: %[[R:.*]] = tcc.div %[[E]], %[[S]]
// CHECK: return %[[R]]
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %0 = tcc.softmax %x axis = 1 : tensor<2x10xf32>
  return %0 : tensor<2x10xf32>
}

// -----

// Tests that log_softmax is the shifted input minus the log of the sum.
// CHECK-LABEL: func @log_softmax
// CHECK: %[[M:.*]] = tcc.reduce_max %{{.*}} axes = [0] keepdims
// CHECK: %[[D:.*]] = tcc.sub %{{.*}}, %[[M]]
// CHECK: %[[E:.*]] = tcc.exp %[[D]]
// CHECK: %[[S:.*]] = tcc.reduce_sum %[[E]] axes = [0] keepdims
// CHECK: %[[L:.*]] = tcc.log %[[S]]
// CHECK: %[[R:.*]] = tcc.sub %[[D]], %[[L]]
// CHECK: return %[[R]]
func.func @log_softmax(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tcc.log_softmax %x axis = 0 : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that layer_norm normalizes over the trailing axes with the biased
// variance, then scales and shifts.
// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[EPS:.*]] = tcc.constant dense<9.99999974E-6> : tensor<f32>
// CHECK: %[[MEAN:.*]] = tcc.reduce_mean %[[X]] axes = [1, 2] keepdims : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
// CHECK: %[[C:.*]] = tcc.sub %[[X]], %[[MEAN]]
// CHECK: %[[SQ:.*]] = tcc.mul %[[C]], %[[C]]
// CHECK: %[[VAR:.*]] = tcc.reduce_mean %[[SQ]] axes = [1, 2] keepdims
// CHECK: %[[VE:.*]] = tcc.add %[[VAR]], %[[EPS]]
// CHECK: %[[INV:.*]] = tcc.rsqrt %[[VE]]
// CHECK: %[[N:.*]] = tcc.mul %[[C]], %[[INV]]
// CHECK: %[[S:.*]] = tcc.mul %[[N]], %[[G]]
// CHECK: %[[R:.*]] = tcc.add %[[S]], %[[B]]
// CHECK: return %[[R]]
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = tcc.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-5 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that batch_norm becomes x * a + b with per-channel a and b shaped to
// broadcast along dimension 1.
// CHECK-LABEL: func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4x4xf32>, %[[S:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK: %[[VE:.*]] = tcc.add %[[V]], %{{.*}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[INV:.*]] = tcc.rsqrt %[[VE]]
// CHECK: %[[A:.*]] = tcc.mul %[[S]], %[[INV]]
// CHECK: %[[MA:.*]] = tcc.mul %[[M]], %[[A]]
// CHECK: %[[SHIFT:.*]] = tcc.sub %[[B]], %[[MA]]
// CHECK: %[[A2:.*]] = tcc.reshape %[[A]] : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK: %[[B2:.*]] = tcc.reshape %[[SHIFT]] : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK: %[[Y:.*]] = tcc.mul %[[X]], %[[A2]]
// CHECK: %[[R:.*]] = tcc.add %[[Y]], %[[B2]]
// CHECK: return %[[R]]
func.func @batch_norm(%x: tensor<1x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = tcc.batch_norm %x, %s, %b, %m, %v epsilon = 1.0e-5 : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Tests that batch_norm with constant statistics folds to constants.
// CHECK-LABEL: func @batch_norm_constant
// CHECK-DAG: %[[A:.*]] = tcc.constant dense<{{\[}}[2.000000e+00], [1.000000e+00]]> : tensor<2x1xf32>
// CHECK-DAG: %[[B:.*]] = tcc.constant dense<{{\[}}[-1.000000e+00], [3.000000e+00]]> : tensor<2x1xf32>
// CHECK: %[[Y:.*]] = tcc.mul %{{.*}}, %[[A]]
// CHECK: tcc.add %[[Y]], %[[B]]
func.func @batch_norm_constant(%x: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %s = tcc.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = tcc.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %m = tcc.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %v = tcc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %0 = tcc.batch_norm %x, %s, %b, %m, %v epsilon = 0.0 : (tensor<1x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// Tests that nll_loss picks each target's log-probability through the
// one-hot mask of the class ramp, negates, and divides the sum by the count
// of positions for `mean`.
// CHECK-LABEL: func @nll_loss_mean
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[T:.*]]: tensor<4xi64>)
// CHECK-DAG: %[[N:.*]] = tcc.constant dense<4.000000e+00> : tensor<f32>
// CHECK-DAG: %[[RAMP:.*]] = tcc.constant dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi64>
// CHECK: %[[T2:.*]] = tcc.reshape %[[T]] : tensor<4xi64> -> tensor<4x1xi64>
// CHECK: %[[HOT:.*]] = tcc.cmp eq, %[[T2]], %[[RAMP]] : (tensor<4x1xi64>, tensor<1x3xi64>) -> tensor<4x3xi1>
// CHECK: %[[SEL:.*]] = tcc.select %[[HOT]], %[[X]], %{{.*}} : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK: %[[PICK:.*]] = tcc.reduce_sum %[[SEL]] axes = [1] : tensor<4x3xf32> -> tensor<4xf32>
// CHECK: %[[NEG:.*]] = tcc.neg %[[PICK]]
// CHECK: %[[SUM:.*]] = tcc.reduce_sum %[[NEG]] axes = [0] : tensor<4xf32> -> tensor<f32>
// CHECK: %[[R:.*]] = tcc.div %[[SUM]], %[[N]]
// CHECK: return %[[R]]
func.func @nll_loss_mean(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %0 = tcc.nll_loss %x, %t reduction = mean : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that weights and ignore_index weigh each position: the picked class
// weight times (target != ignore_index), which also divides a `mean`.
// CHECK-LABEL: func @nll_loss_weighted
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[T:.*]]: tensor<4xi64>, %[[W:.*]]: tensor<3xf32>)
// CHECK: %[[HOT:.*]] = tcc.cmp eq
// CHECK: %[[W2:.*]] = tcc.reshape %[[W]] : tensor<3xf32> -> tensor<1x3xf32>
// CHECK: %[[WSEL:.*]] = tcc.select %[[HOT]], %[[W2]]
// CHECK: %[[WPOS:.*]] = tcc.reduce_sum %[[WSEL]] axes = [1] : tensor<4x3xf32> -> tensor<4xf32>
// CHECK: %[[VALID:.*]] = tcc.cmp ne, %[[T]], %{{.*}} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
// CHECK: %[[COUNT:.*]] = tcc.cast %[[VALID]] : tensor<4xi1> -> tensor<4xf32>
// CHECK: %[[WEIGHT:.*]] = tcc.mul %[[WPOS]], %[[COUNT]]
// CHECK: tcc.select %[[HOT]], %[[X]]
// CHECK: %[[NEG:.*]] = tcc.neg
// CHECK: %[[LOSS:.*]] = tcc.mul %[[NEG]], %[[WEIGHT]]
// CHECK: %[[SUM:.*]] = tcc.reduce_sum %[[LOSS]] axes = [0]
// CHECK: %[[TOTAL:.*]] = tcc.reduce_sum %[[WEIGHT]] axes = [0]
// CHECK: %[[R:.*]] = tcc.div %[[SUM]], %[[TOTAL]]
// CHECK: return %[[R]]
func.func @nll_loss_weighted(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = tcc.nll_loss %x, %t, %w reduction = mean ignore_index = 1 : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
