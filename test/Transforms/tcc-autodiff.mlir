// RUN: tcc-opt %s --tcc-autodiff="function=dot_tanh wrt=0" --canonicalize | FileCheck %s --check-prefix=DOT
// RUN: tcc-opt %s --tcc-autodiff="function=linear_softmax" --canonicalize | FileCheck %s --check-prefix=LINEAR
// RUN: tcc-opt %s --tcc-autodiff="function=integer_path grad-function=g" --canonicalize | FileCheck %s --check-prefix=INT
// RUN: tcc-opt %s --tcc-autodiff="function=cross_entropy wrt=0" --canonicalize | FileCheck %s --check-prefix=NLL
// RUN: not tcc-opt %s --tcc-autodiff="function=vector_loss" 2>&1 | FileCheck %s --check-prefix=ERR-LOSS
// RUN: not tcc-opt %s --tcc-autodiff="function=dot_tanh wrt=5" 2>&1 | FileCheck %s --check-prefix=ERR-WRT
// RUN: not tcc-opt %s --tcc-autodiff="function=missing" 2>&1 | FileCheck %s --check-prefix=ERR-MISSING
// RUN: tcc-opt %s --tcc-autodiff="function=pools_tiling wrt=0" --canonicalize | FileCheck %s --check-prefix=POOL

// Tests that the gradient function runs the forward ops, then the VJPs in
// reverse: d/dw sum(tanh(w * x)) = (1 - tanh^2) * x, only for `wrt`; the
// forward function is kept.
// DOT-LABEL: func.func @dot_tanh(
// DOT-LABEL: func.func @dot_tanh_grad(
// DOT-SAME: %[[W:.*]]: tensor<3xf32>, %[[X:.*]]: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32> {tcc.name = "grad_arg0"})
// DOT: %[[ONE:.*]] = tcc.constant dense<1.000000e+00> : tensor<f32>
// DOT: %[[P:.*]] = tcc.mul %[[W]], %[[X]]
// DOT: %[[T:.*]] = tcc.tanh %[[P]]
// DOT: %[[L:.*]] = tcc.reduce_sum %[[T]]
// DOT: %[[T2:.*]] = tcc.mul %[[T]], %[[T]]
// DOT: %[[D:.*]] = tcc.sub %[[ONE]], %[[T2]]
// DOT: %[[G:.*]] = tcc.mul %[[D]], %[[X]]
// DOT: return %[[L]], %[[G]]
func.func @dot_tanh(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
  %p = tcc.mul %w, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %t = tcc.tanh %p : tensor<3xf32>
  %l = tcc.reduce_sum %t axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// Tests matmul, a broadcast bias, relu, softmax and mean: the bias gradient
// sums the broadcast rows away, the matmul gradients multiply by the
// transposed operands, relu selects where its input was positive.
// LINEAR-LABEL: func.func @linear_softmax_grad(
// LINEAR-SAME: -> (tensor<f32>, tensor<4x8xf32> {tcc.name = "grad_x"}, tensor<8x3xf32> {tcc.name = "grad_w"}, tensor<3xf32> {tcc.name = "grad_arg2"})
// LINEAR: %[[MEAN:.*]] = tcc.constant dense<0.0833333358> : tensor<4x3xf32>
// LINEAR: %[[M:.*]] = tcc.matmul %arg0, %arg1
// LINEAR: %[[R:.*]] = tcc.relu
// LINEAR: %[[S:.*]] = tcc.softmax %[[R]] axis = 1
// LINEAR: %[[L:.*]] = tcc.reduce_mean %[[S]]
// LINEAR: tcc.reduce_sum {{.*}} axes = [1] keepdims
// LINEAR: %[[POS:.*]] = tcc.cmp gt, %[[R]]
// LINEAR: %[[DA:.*]] = tcc.select %[[POS]]
// LINEAR: %[[DB:.*]] = tcc.reduce_sum %[[DA]] axes = [0] keepdims : tensor<4x3xf32> -> tensor<1x3xf32>
// LINEAR: %[[DBR:.*]] = tcc.reshape %[[DB]] : tensor<1x3xf32> -> tensor<3xf32>
// LINEAR: %[[WT:.*]] = tcc.transpose %arg1 perm = [1, 0]
// LINEAR: %[[DX:.*]] = tcc.matmul %[[DA]], %[[WT]]
// LINEAR: %[[XT:.*]] = tcc.transpose %arg0 perm = [1, 0]
// LINEAR: %[[DW:.*]] = tcc.matmul %[[XT]], %[[DA]]
// LINEAR: return %[[L]], %[[DX]], %[[DW]], %[[DBR]]
func.func @linear_softmax(%x: tensor<4x8xf32> {tcc.name = "x"}, %w: tensor<8x3xf32> {tcc.name = "w"}, %b: tensor<3xf32>) -> tensor<f32> {
  %m = tcc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %a = tcc.add %m, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %r = tcc.relu %a : tensor<4x3xf32>
  %s = tcc.softmax %r axis = 1 : tensor<4x3xf32>
  %l = tcc.reduce_mean %s axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// Tests that integer values carry no gradient: argmax is not on the
// gradient's path, so only the sum's VJP contributes.
// INT-LABEL: func.func @g(
// INT: %[[I:.*]] = tcc.argmax
// INT: %[[F:.*]] = tcc.cast %[[I]]
// INT-NOT: tcc.argmax
// INT: %[[R:.*]] = tcc.reshape %[[F]] : tensor<f32> -> tensor<1xf32>
// INT: %[[G:.*]] = tcc.broadcast_to %[[R]] : tensor<1xf32> -> tensor<3xf32>
// INT: return %{{.*}}, %[[G]]
func.func @integer_path(%x: tensor<3xf32>) -> tensor<f32> {
  %i = tcc.argmax %x axis = 0 : tensor<3xf32> -> tensor<i64>
  %f = tcc.cast %i : tensor<i64> -> tensor<f32>
  %s = tcc.reduce_sum %x axes = [0] : tensor<3xf32> -> tensor<f32>
  %l = tcc.mul %f, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// Tests nll_loss's VJP: minus the cotangent over the position count, at
// each position's target class (the one-hot mask), zero elsewhere; then
// log_softmax's.
// NLL-LABEL: func.func @cross_entropy_grad(
// NLL-SAME: %[[X:.*]]: tensor<4x3xf32>, %[[T:.*]]: tensor<4xi64>)
// NLL: %[[LP:.*]] = tcc.log_softmax %[[X]] axis = 1
// NLL: %[[L:.*]] = tcc.nll_loss %[[LP]], %[[T]] reduction = mean
// NLL: %[[HOT:.*]] = tcc.cmp eq, %{{.*}}, %{{.*}} : (tensor<4x1xi64>, tensor<1x3xi64>) -> tensor<4x3xi1>
// NLL: %[[G:.*]] = tcc.select %[[HOT]], %{{.*}}, %{{.*}} : (tensor<4x3xi1>, tensor<4x1xf32>, tensor<f32>) -> tensor<4x3xf32>
// NLL: tcc.exp
// NLL: return %[[L]], %{{.*}} : tensor<f32>, tensor<4x3xf32>
func.func @cross_entropy(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %lp = tcc.log_softmax %x axis = 1 : tensor<4x3xf32>
  %l = tcc.nll_loss %lp, %t reduction = mean : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// ERR-LOSS: error: tcc-autodiff: the loss (result 0 of @vector_loss) must be a floating-point tensor with one element, not 'tensor<3xf32>'
func.func @vector_loss(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// ERR-WRT: error: tcc-autodiff: wrt index 5 is out of range: @dot_tanh has 2 arguments
// ERR-MISSING: error: tcc-autodiff: no function named 'missing'

// Tests the VJPs of pooling windows that tile the input: x viewed with each
// window's taps as axes of their own, the gradient of max pooling taken by
// the first maximum (tap numbers counted down, the largest among the hits),
// that of average pooling broadcast; no per-tap scatter (pad).
// POOL-LABEL: func.func @pools_tiling_grad(
// POOL-SAME: %[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<1x2x2x2xf32>)
// POOL-DAG: %[[TAPS:.*]] = tcc.constant dense<{{\[\[\[\[\[\[}}3.000000e+00, 2.000000e+00]], {{\[\[}}1.000000e+00, 0.000000e+00]]]]]]> : tensor<1x1x1x2x1x2xf32>
// POOL: %[[AVG:.*]] = tcc.broadcast_to %{{.*}} : tensor<1x2x2x1x2x1xf32> -> tensor<1x2x2x2x2x2xf32>
// POOL: %[[GAVG:.*]] = tcc.reshape %[[AVG]] : tensor<1x2x2x2x2x2xf32> -> tensor<1x2x4x4xf32>
// POOL: %[[X6:.*]] = tcc.reshape %[[X]] : tensor<1x2x4x4xf32> -> tensor<1x2x2x2x2x2xf32>
// POOL-DAG: %[[NAN:.*]] = tcc.cmp ne, %[[X6]], %[[X6]]
// POOL-DAG: %[[EQ:.*]] = tcc.cmp eq, %[[X6]], %{{.*}} : (tensor<1x2x2x2x2x2xf32>, tensor<1x2x2x1x2x1xf32>)
// POOL: %[[HIT:.*]] = tcc.or %[[EQ]], %[[NAN]]
// POOL: %[[CAND:.*]] = tcc.select %[[HIT]], %[[TAPS]], %{{.*}} : (tensor<1x2x2x2x2x2xi1>, tensor<1x1x1x2x1x2xf32>, tensor<f32>)
// POOL: %[[FIRST:.*]] = tcc.reduce_max %[[CAND]] axes = [3, 5] keepdims : tensor<1x2x2x2x2x2xf32> -> tensor<1x2x2x1x2x1xf32>
// POOL: %[[TAKEN:.*]] = tcc.cmp eq, %[[TAPS]], %[[FIRST]]
// POOL: %[[G6:.*]] = tcc.reshape %[[W]] : tensor<1x2x2x2xf32> -> tensor<1x2x2x1x2x1xf32>
// POOL: %[[GMAX6:.*]] = tcc.select %[[TAKEN]], %[[G6]], %{{.*}}
// POOL: %[[GMAX:.*]] = tcc.reshape %[[GMAX6]] : tensor<1x2x2x2x2x2xf32> -> tensor<1x2x4x4xf32>
// POOL-NOT: tcc.pad
// POOL: %[[G:.*]] = tcc.add %[[GAVG]], %[[GMAX]]
// POOL: return %{{.*}}, %[[G]]
func.func @pools_tiling(%x: tensor<1x2x4x4xf32>, %w: tensor<1x2x2x2xf32>) -> tensor<f32> {
  %m = tcc.max_pool %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %a = tcc.avg_pool %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %mw = tcc.mul %m, %w : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %aw = tcc.mul %a, %w : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %s = tcc.add %mw, %aw : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %l = tcc.reduce_sum %s axes = [0, 1, 2, 3] : tensor<1x2x2x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
