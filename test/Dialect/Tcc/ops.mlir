// RUN: tcc-opt %s | tcc-opt | FileCheck %s
// RUN: tcc-opt %s --mlir-print-op-generic | tcc-opt | FileCheck %s

// Tests that every tcc op round-trips through its custom assembly and
// through the generic form.

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<2xf32>, tensor<2x2xi64>) {
  // CHECK: tcc.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = tcc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: tcc.constant dense_resource<weights> : tensor<2x2xi64>
  %1 = tcc.constant dense_resource<weights> : tensor<2x2xi64>
  return %0, %1 : tensor<2xf32>, tensor<2x2xi64>
}

// CHECK-LABEL: func @binary
func.func @binary(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %i: tensor<4xi32>,
                  %p: tensor<4xi1>) {
  // CHECK: tcc.add %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %0 = tcc.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: tcc.sub
  %1 = tcc.sub %b, %a : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: tcc.mul
  %2 = tcc.mul %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: tcc.div
  %3 = tcc.div %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: tcc.rem
  %4 = tcc.rem %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: tcc.pow
  %5 = tcc.pow %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: tcc.max
  %6 = tcc.max %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: tcc.min
  %7 = tcc.min %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: tcc.and
  %8 = tcc.and %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: tcc.or
  %9 = tcc.or %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: tcc.xor
  %10 = tcc.xor %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: tcc.cmp ge, %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %11 = tcc.cmp ge, %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  // CHECK: tcc.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %12 = tcc.select %11, %a, %b : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return
}

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<2xi64>, %p: tensor<2xi1>) {
  // CHECK: tcc.neg %{{.*}} : tensor<2x3xf32>
  %0 = tcc.neg %x : tensor<2x3xf32>
  // CHECK: tcc.abs %{{.*}} : tensor<2xi64>
  %1 = tcc.abs %i : tensor<2xi64>
  // CHECK: tcc.sign
  %2 = tcc.sign %x : tensor<2x3xf32>
  // CHECK: tcc.relu
  %3 = tcc.relu %x : tensor<2x3xf32>
  // CHECK: tcc.exp
  %4 = tcc.exp %x : tensor<2x3xf32>
  // CHECK: tcc.log
  %5 = tcc.log %x : tensor<2x3xf32>
  // CHECK: tcc.sqrt
  %6 = tcc.sqrt %x : tensor<2x3xf32>
  // CHECK: tcc.rsqrt
  %7 = tcc.rsqrt %x : tensor<2x3xf32>
  // CHECK: tcc.reciprocal
  %8 = tcc.reciprocal %x : tensor<2x3xf32>
  // CHECK: tcc.tanh
  %9 = tcc.tanh %x : tensor<2x3xf32>
  // CHECK: tcc.sigmoid
  %10 = tcc.sigmoid %x : tensor<2x3xf32>
  // CHECK: tcc.erf
  %11 = tcc.erf %x : tensor<2x3xf32>
  // CHECK: tcc.sin
  %12 = tcc.sin %x : tensor<2x3xf32>
  // CHECK: tcc.cos
  %13 = tcc.cos %x : tensor<2x3xf32>
  // CHECK: tcc.floor
  %14 = tcc.floor %x : tensor<2x3xf32>
  // CHECK: tcc.ceil
  %15 = tcc.ceil %x : tensor<2x3xf32>
  // CHECK: tcc.round
  %16 = tcc.round %x : tensor<2x3xf32>
  // CHECK: tcc.not %{{.*}} : tensor<2xi1>
  %17 = tcc.not %p : tensor<2xi1>
  // CHECK: tcc.gelu %{{.*}} : tensor<2x3xf32>
  %18 = tcc.gelu %x : tensor<2x3xf32>
  // CHECK: tcc.gelu %{{.*}} approximate = tanh : tensor<2x3xf32>
  %19 = tcc.gelu %x approximate = tanh : tensor<2x3xf32>
  // CHECK: tcc.clamp %{{.*}} min = 0.000000e+00 max = 6.000000e+00 : tensor<2x3xf32>
  %20 = tcc.clamp %x min = 0.0 max = 6.0 : tensor<2x3xf32>
  // CHECK: tcc.clamp %{{.*}} max = 1.000000e+00 : tensor<2xi64>
  %21 = tcc.clamp %i max = 1.0 : tensor<2xi64>
  // CHECK: tcc.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xbf16>
  %22 = tcc.cast %x : tensor<2x3xf32> -> tensor<2x3xbf16>
  return
}

// CHECK-LABEL: func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5xi8>) {
  // CHECK: tcc.reduce_sum %{{.*}} axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %0 = tcc.reduce_sum %x axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  // CHECK: tcc.reduce_mean %{{.*}} axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %1 = tcc.reduce_mean %x axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  // CHECK: tcc.reduce_max
  %2 = tcc.reduce_max %i axes = [0] : tensor<5xi8> -> tensor<i8>
  // CHECK: tcc.reduce_min
  %3 = tcc.reduce_min %x axes = [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>
  // CHECK: tcc.reduce_prod
  %4 = tcc.reduce_prod %x axes = [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // CHECK: tcc.argmax %{{.*}} axis = 1 keepdims select_last_index : tensor<2x3x4xf32> -> tensor<2x1x4xi64>
  %5 = tcc.argmax %x axis = 1 keepdims select_last_index : tensor<2x3x4xf32> -> tensor<2x1x4xi64>
  // CHECK: tcc.argmin %{{.*}} axis = 2 : tensor<2x3x4xf32> -> tensor<2x3xi64>
  %6 = tcc.argmin %x axis = 2 : tensor<2x3x4xf32> -> tensor<2x3xi64>
  return
}

// CHECK-LABEL: func @nn
func.func @nn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>,
              %m: tensor<2x5x6xf32>, %n: tensor<6x7xf32>, %v: tensor<6xf32>) {
  // CHECK: tcc.matmul %{{.*}}, %{{.*}} : (tensor<2x5x6xf32>, tensor<6x7xf32>) -> tensor<2x5x7xf32>
  %0 = tcc.matmul %m, %n : (tensor<2x5x6xf32>, tensor<6x7xf32>) -> tensor<2x5x7xf32>
  // CHECK: tcc.matmul %{{.*}}, %{{.*}} : (tensor<2x5x6xf32>, tensor<6xf32>) -> tensor<2x5xf32>
  %1 = tcc.matmul %m, %v : (tensor<2x5x6xf32>, tensor<6xf32>) -> tensor<2x5xf32>
  // CHECK: tcc.conv %{{.*}}, %{{.*}}, %{{.*}} strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %w3 = tcc.broadcast_to %w : tensor<4x1x3x3xf32> -> tensor<4x3x3x3xf32>
  %2 = tcc.conv %x, %w3, %b strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: tcc.conv %{{.*}}, %{{.*}} strides = [1, 1] padding = [0, 0, 0, 0] dilations = [2, 2] groups = 3 : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32>
  %w1 = tcc.slice %w offsets = [0, 0, 0, 0] steps = [1, 1, 1, 1] : tensor<4x1x3x3xf32> -> tensor<3x1x3x3xf32>
  %3 = tcc.conv %x, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [2, 2] groups = 3 : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: tcc.max_pool %{{.*}} kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] ceil_mode : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  %4 = tcc.max_pool %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] ceil_mode : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  // CHECK: tcc.avg_pool %{{.*}} kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] count_include_pad : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  %5 = tcc.avg_pool %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] count_include_pad : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  // CHECK: tcc.softmax %{{.*}} axis = 2 : tensor<2x5x6xf32>
  %6 = tcc.softmax %m axis = 2 : tensor<2x5x6xf32>
  // CHECK: tcc.log_softmax %{{.*}} axis = 0 : tensor<2x5x6xf32>
  %7 = tcc.log_softmax %m axis = 0 : tensor<2x5x6xf32>
  // CHECK: tcc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} axis = 2 epsilon = 9.9999997473787516E-6 : (tensor<2x5x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x5x6xf32>
  %8 = tcc.layer_norm %m, %v, %v axis = 2 epsilon = 9.9999997473787516E-6 : (tensor<2x5x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x5x6xf32>
  // CHECK: tcc.layer_norm %{{.*}}, %{{.*}} axis = 1 epsilon = 1.000000e-03 : (tensor<2x5x6xf32>, tensor<5x6xf32>) -> tensor<2x5x6xf32>
  %s = tcc.reshape %m : tensor<2x5x6xf32> -> tensor<10x6xf32>
  %s2 = tcc.slice %s offsets = [0, 0] steps = [1, 1] : tensor<10x6xf32> -> tensor<5x6xf32>
  %9 = tcc.layer_norm %m, %s2 axis = 1 epsilon = 1.0e-3 : (tensor<2x5x6xf32>, tensor<5x6xf32>) -> tensor<2x5x6xf32>
  // CHECK: tcc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon = 1.000000e-05 : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %10 = tcc.batch_norm %2, %b, %b, %b, %b epsilon = 1.0e-5 : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return
}

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %ids: tensor<6xi64>,
                  %d: tensor<?x4xf32>) {
  // CHECK: tcc.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %0 = tcc.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: tcc.transpose %{{.*}} perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = tcc.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: tcc.broadcast_to %{{.*}} : tensor<2x3x4xf32> -> tensor<5x2x3x4xf32>
  %2 = tcc.broadcast_to %x : tensor<2x3x4xf32> -> tensor<5x2x3x4xf32>
  // CHECK: tcc.concat %{{.*}}, %{{.*}} axis = 1 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  %3 = tcc.concat %x, %y axis = 1 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  // CHECK: tcc.slice %{{.*}} offsets = [1, 2, 0] steps = [1, -1, 2] : tensor<2x3x4xf32> -> tensor<1x3x2xf32>
  %4 = tcc.slice %x offsets = [1, 2, 0] steps = [1, -1, 2] : tensor<2x3x4xf32> -> tensor<1x3x2xf32>
  // CHECK: tcc.split %{{.*}} axis = 2 : tensor<2x3x4xf32> -> tensor<2x3x1xf32>, tensor<2x3x3xf32>
  %5:2 = tcc.split %x axis = 2 : tensor<2x3x4xf32> -> tensor<2x3x1xf32>, tensor<2x3x3xf32>
  // CHECK: tcc.gather %{{.*}}, %{{.*}} axis = 1 : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<2x6x4xf32>
  %6 = tcc.gather %x, %ids axis = 1 : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<2x6x4xf32>
  // CHECK: tcc.pad %{{.*}} low = [0, 1, 2] high = [1, 0, 0] mode = reflect : tensor<2x3x4xf32> -> tensor<3x4x6xf32>
  %7 = tcc.pad %x low = [0, 1, 2] high = [1, 0, 0] mode = reflect : tensor<2x3x4xf32> -> tensor<3x4x6xf32>
  // CHECK: tcc.pad %{{.*}} low = [0, 0, 0] high = [0, 0, 1] mode = constant value = -1.000000e+00 : tensor<2x3x4xf32> -> tensor<2x3x5xf32>
  %8 = tcc.pad %x low = [0, 0, 0] high = [0, 0, 1] mode = constant value = -1.0 : tensor<2x3x4xf32> -> tensor<2x3x5xf32>
  // Dynamic dimensions verify where the rule allows them.
  // CHECK: tcc.transpose %{{.*}} perm = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  %9 = tcc.transpose %d perm = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  return
}

// CHECK-LABEL: func @fused
func.func @fused(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: tcc.fused "elementwise"(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ^bb0(%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>):
  // CHECK:   %[[S:.*]] = tcc.add %[[X]], %[[Y]]
  // CHECK:   tcc.yield %[[S]] : tensor<4xf32>
  %0 = tcc.fused "elementwise" (%a, %b : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = tcc.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tcc.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x080000000100000000000000020000000000000003000000000000000400000000000000"
    }
  }
#-}

// CHECK-LABEL: func @ukernel
func.func @ukernel(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>, %ma: memref<4x8xf32>, %mc: memref<4x2xf32>) -> tensor<4x2xf32> {
  // CHECK: tcc.ukernel "sgemm" ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>) outs(%{{.*}} : tensor<4x2xf32>) params {m = 4 : i64} -> tensor<4x2xf32>
  %0 = tcc.ukernel "sgemm" ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) params {m = 4 : i64} -> tensor<4x2xf32>
  // CHECK: tcc.ukernel "sgemm" ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4x2xf32>) params {}
  tcc.ukernel "sgemm" ins(%ma : memref<4x8xf32>) outs(%mc : memref<4x2xf32>) params {}
  return %0 : tensor<4x2xf32>
}

// CHECK-LABEL: func @more_math
func.func @more_math(%x: tensor<3xf32>, %i: tensor<3xui8>, %s: tensor<3xui8>,
                     %b: tensor<3xi1>) {
  // CHECK: tcc.tan %{{.*}} : tensor<3xf32>
  %0 = tcc.tan %x : tensor<3xf32>
  // CHECK: tcc.asin
  %1 = tcc.asin %x : tensor<3xf32>
  // CHECK: tcc.acos
  %2 = tcc.acos %x : tensor<3xf32>
  // CHECK: tcc.atan
  %3 = tcc.atan %x : tensor<3xf32>
  // CHECK: tcc.sinh
  %4 = tcc.sinh %x : tensor<3xf32>
  // CHECK: tcc.cosh
  %5 = tcc.cosh %x : tensor<3xf32>
  // CHECK: tcc.asinh
  %6 = tcc.asinh %x : tensor<3xf32>
  // CHECK: tcc.acosh
  %7 = tcc.acosh %x : tensor<3xf32>
  // CHECK: tcc.atanh
  %8 = tcc.atanh %x : tensor<3xf32>
  // CHECK: tcc.shift_left %{{.*}}, %{{.*}} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %9 = tcc.shift_left %i, %s : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  // CHECK: tcc.shift_right
  %10 = tcc.shift_right %i, %s : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  // CHECK: tcc.bitcast %{{.*}} : tensor<3xf32> -> tensor<3xi32>
  %11 = tcc.bitcast %x : tensor<3xf32> -> tensor<3xi32>
  // CHECK: tcc.bitcast %{{.*}} : tensor<3xi1> -> tensor<3xui8>
  %12 = tcc.bitcast %b : tensor<3xi1> -> tensor<3xui8>
  return
}

// CHECK-LABEL: func @scans
func.func @scans(%x: tensor<2x5xf32>, %d: tensor<3x3xf32>, %idx: tensor<2x3xi64>,
                 %u: tensor<2x3xf32>) {
  // CHECK: tcc.cumsum %{{.*}} axis = 1 exclusive reverse : tensor<2x5xf32>
  %0 = tcc.cumsum %x axis = 1 exclusive reverse : tensor<2x5xf32>
  // CHECK: tcc.cumprod %{{.*}} axis = 0 : tensor<2x5xf32>
  %1 = tcc.cumprod %x axis = 0 : tensor<2x5xf32>
  // CHECK: tcc.topk %{{.*}} axis = 1 largest : tensor<2x5xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
  %2:2 = tcc.topk %x axis = 1 largest : tensor<2x5xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
  // CHECK: tcc.scatter %{{.*}}, %{{.*}}, %{{.*}} axis = 0 reduction = add : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %3 = tcc.scatter %d, %idx, %u axis = 0 reduction = add : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return
}

// CHECK-LABEL: func @control_flow
func.func @control_flow(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>,
                        %n: tensor<i64>) -> (tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>) {
  // CHECK: tcc.if %{{.*}} : tensor<i1> -> tensor<2xf32> {
  // CHECK:   tcc.yield %{{.*}} : tensor<2xf32>
  // CHECK: } else {
  %0 = tcc.if %c : tensor<i1> -> tensor<2xf32> {
    tcc.yield %a : tensor<2xf32>
  } else {
    tcc.yield %b : tensor<2xf32>
  }
  // CHECK: tcc.loop %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<2xf32>):
  %1:2 = tcc.loop %n, %c, %a : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %acc: tensor<2xf32>):
    %next = tcc.add %acc, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tcc.yield %go, %next, %next : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return %0, %1#0, %1#1 : tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>
}

// Tests that nll_loss round-trips with and without weight and ignore_index.
// CHECK-LABEL: func.func @nll_loss
func.func @nll_loss(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<4xf32>) {
  // CHECK: tcc.nll_loss %{{.*}}, %{{.*}} reduction = mean : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %0 = tcc.nll_loss %x, %t reduction = mean : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  // CHECK: tcc.nll_loss %{{.*}}, %{{.*}}, %{{.*}} reduction = none ignore_index = 2 : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<4xf32>
  %1 = tcc.nll_loss %x, %t, %w reduction = none ignore_index = 2 : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<f32>, tensor<4xf32>
}
