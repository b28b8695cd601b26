// RUN: tcc-opt %s --convert-tcc-to-linalg=ukernels=avx512 --canonicalize --split-input-file | FileCheck %s
// RUN: tcc-opt %s --convert-tcc-to-linalg=ukernels=avx2 --canonicalize --split-input-file | FileCheck %s --check-prefix=AVX2

// Tests that a convolution group becomes one conv2d kernel call: weights
// packed at compile time, the bias and the relu as the kernel's epilogue,
// and the scratch the kernel needs as a second output.
// CHECK-LABEL: func @conv_bias_relu
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<packed_weight_{{[0-9a-f]+}}> : tensor<144xf32>
// CHECK: %[[R:.*]]:2 = tcc.ukernel "conv2d" ins(%{{.*}}, %[[W]], %[[B]] : tensor<1x2x6x6xf32>, tensor<144xf32>, tensor<4xf32>) outs(%{{.*}}, %{{.*}} : tensor<1x4x6x6xf32>, tensor<{{[0-9]+}}xi8>)
// CHECK-SAME: clamp_min = 0.000000e+00 : f32
// CHECK-SAME: flags = 8 : i64
// CHECK-SAME: has_bias = 1 : i64, has_clamp = 1 : i64, has_residual = 0 : i64
// CHECK: return %[[R]]#0
func.func @conv_bias_relu(%x: tensor<1x2x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w = tcc.constant dense<0.5> : tensor<4x2x3x3xf32>
  %b = tcc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = tcc.fused "contraction"(%x, %w, %b : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a0: tensor<1x2x6x6xf32>, %a1: tensor<4x2x3x3xf32>, %a2: tensor<4xf32>):
    %c = tcc.conv %a0, %a1, %a2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    %r = tcc.relu %c : tensor<1x4x6x6xf32>
    tcc.yield %r : tensor<1x4x6x6xf32>
  }
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Tests that rows times a weight matrix, plus a bias and a residual, is one
// sgemm call whose epilogue adds both, and which can accumulate into C
// instead (C is dense like the residual): the same params but for the
// accumulate flag (1) and no residual.
// CHECK-LABEL: func @linear
// CHECK: tcc.ukernel "sgemm" ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<2x3x16xf32>)
// CHECK-SAME: batch = 1 : i64
// CHECK-SAME: flags = 0 : i64, has_bias = 1 : i64, has_clamp = 0 : i64, has_residual = 1 : i64
// CHECK-SAME: m = 6 : i64, n = 16 : i64
// CHECK-SAME: accumulate {{{.*}}flags = 1 : i64, has_bias = 1 : i64, has_clamp = 0 : i64, has_residual = 0 : i64
// CHECK-NOT: linalg.generic
func.func @linear(%x: tensor<2x3x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %res: tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  %0 = tcc.fused "contraction"(%x, %w, %b, %res : tensor<2x3x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  ^bb0(%a0: tensor<2x3x8xf32>, %a1: tensor<8x16xf32>, %a2: tensor<16xf32>, %a3: tensor<2x3x16xf32>):
    %m = tcc.matmul %a0, %a1 : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
    %s = tcc.add %m, %a2 : (tensor<2x3x16xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
    %t = tcc.add %s, %a3 : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
    tcc.yield %t : tensor<2x3x16xf32>
  }
  return %0 : tensor<2x3x16xf32>
}

// -----

// Tests that equal batches become one call over the batch.
// CHECK-LABEL: func @batched
// CHECK: tcc.ukernel "sgemm"
// CHECK-SAME: batch = 2 : i64
// CHECK-SAME: stride_a = 32 : i64, stride_b = 32 : i64, stride_c = 16 : i64
func.func @batched(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  %0 = tcc.matmul %q, %k : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// Tests that a transposed constant weight is packed from its original
// layout (no transpose at run time).
// CHECK-LABEL: func @transposed_weight
// CHECK-NOT: linalg.transpose
// CHECK: %[[W:.*]] = arith.constant dense_resource<packed_weight{{.*}}> : tensor<{{[0-9]+}}xf32>
// CHECK: tcc.ukernel "sgemm" ins(%{{.*}}, %[[W]] :
// CHECK-SAME: flags = 16 : i64
func.func @transposed_weight(%x: tensor<3x8xf32>) -> tensor<3x5xf32> {
  %w = tcc.constant dense<1.0> : tensor<5x8xf32>
  %wt = tcc.transpose %w perm = [1, 0] : tensor<5x8xf32> -> tensor<8x5xf32>
  %0 = tcc.matmul %x, %wt : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Tests that a batch broadcast from one matrix is addressed with a zero
// batch stride, not materialized.
// CHECK-LABEL: func @broadcast_batch
// CHECK-NOT: linalg.generic
// CHECK: tcc.ukernel "sgemm" ins(%arg0, %arg1 : tensor<1x4x8xf32>, tensor<3x8x4xf32>)
// CHECK-SAME: batch = 3 : i64
// CHECK-SAME: stride_a = 0 : i64, stride_b = 32 : i64, stride_c = 16 : i64
func.func @broadcast_batch(%a: tensor<1x4x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<3x4x4xf32> {
  %0 = tcc.matmul %a, %b : (tensor<1x4x8xf32>, tensor<3x8x4xf32>) -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

// Tests that an integer product keeps the linalg lowering.
// CHECK-LABEL: func @integer_stays_linalg
// CHECK-NOT: tcc.ukernel
// CHECK: linalg.matmul
func.func @integer_stays_linalg(%a: tensor<4x8xi32>, %b: tensor<8x4xi32>) -> tensor<4x4xi32> {
  %0 = tcc.matmul %a, %b : (tensor<4x8xi32>, tensor<8x4xi32>) -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}

// -----

// Tests that a product with a vector operand keeps the linalg lowering
// (the kernels take matrices).
// CHECK-LABEL: func @vector_stays_linalg
// CHECK-NOT: tcc.ukernel
// CHECK: linalg.
func.func @vector_stays_linalg(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %0 = tcc.matmul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that a depthwise convolution grouped with the 1x1 after it is one
// dwpw_conv2d call on AVX-512: the depthwise bias and relu6 as its own
// epilogue, the 1x1's weights packed, its bias and residual as the call's
// epilogue. The AVX2 kernels have no vector rows for it, so there the group
// is two conv2d calls.
// CHECK-LABEL: func @depthwise_pointwise
// CHECK: %[[R:.*]]:2 = tcc.ukernel "dwpw_conv2d" ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<{{[0-9]+}}xf32>, tensor<8xf32>, tensor<1x8x6x6xf32>)
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<1x8x6x6xf32>, tensor<{{[0-9]+}}xi8>)
// CHECK-SAME: dw_clamp_max = 6.000000e+00 : f32, dw_clamp_min = 0.000000e+00 : f32, dw_has_clamp = 1 : i64
// CHECK-SAME: f = 8 : i64, flags = 8 : i64
// CHECK-SAME: has_bias = 1 : i64, has_clamp = 0 : i64, has_dw_bias = 1 : i64, has_residual = 1 : i64
// CHECK: return %[[R]]#0
// AVX2-LABEL: func @depthwise_pointwise
// AVX2: %[[D:.*]] = tcc.ukernel "conv2d" ins(%{{.*}} : tensor<1x4x6x6xf32>, tensor<36xf32>, tensor<4xf32>)
// AVX2-SAME: groups = 4 : i64
// AVX2: %[[P:.*]]:2 = tcc.ukernel "conv2d" ins(%[[D]], %{{.*}} : tensor<1x4x6x6xf32>, tensor<{{[0-9]+}}xf32>, tensor<8xf32>, tensor<1x8x6x6xf32>)
// AVX2-SAME: groups = 1 : i64
// AVX2: return %[[P]]#0
func.func @depthwise_pointwise(%x: tensor<1x4x6x6xf32>, %r: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %dw = tcc.constant dense<0.25> : tensor<4x1x3x3xf32>
  %db = tcc.constant dense<1.0> : tensor<4xf32>
  %pw = tcc.constant dense<0.5> : tensor<8x4x1x1xf32>
  %pb = tcc.constant dense<2.0> : tensor<8xf32>
  %0 = tcc.fused "contraction"(%x, %dw, %db, %pw, %pb, %r : tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  ^bb0(%a0: tensor<1x4x6x6xf32>, %a1: tensor<4x1x3x3xf32>, %a2: tensor<4xf32>, %a3: tensor<8x4x1x1xf32>, %a4: tensor<8xf32>, %a5: tensor<1x8x6x6xf32>):
    %c = tcc.conv %a0, %a1, %a2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    %k = tcc.clamp %c min = 0.0 max = 6.0 : tensor<1x4x6x6xf32>
    %p = tcc.conv %k, %a3, %a4 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
    %s = tcc.add %p, %a5 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
    tcc.yield %s : tensor<1x8x6x6xf32>
  }
  return %0 : tensor<1x8x6x6xf32>
}

// -----

// Tests that a 5x5 stride-2 depthwise convolution (whose planes the kernels
// compute a vector of planes at a time) grouped with the 1x1 after it is
// one dwpw_conv2d call on AVX-512 too, its window passed; on AVX2 the pair
// without halves of k is slower than two calls, so there it is two.
// CHECK-LABEL: func @depthwise5x5_pointwise
// CHECK: %[[R:.*]]:2 = tcc.ukernel "dwpw_conv2d" ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x16x9x9xf32>, tensor<16x1x5x5xf32>, tensor<{{[0-9]+}}xf32>, tensor<8xf32>)
// CHECK-SAME: f = 8 : i64
// CHECK-SAME: kh = 5 : i64, kw = 5 : i64
// CHECK-SAME: stride_h = 2 : i64, stride_w = 2 : i64
// CHECK: return %[[R]]#0
// AVX2-LABEL: func @depthwise5x5_pointwise
// AVX2: %[[D:.*]] = tcc.ukernel "conv2d" ins(%{{.*}}, %{{.*}} : tensor<1x16x9x9xf32>, tensor<400xf32>)
// AVX2-SAME: groups = 16 : i64
// AVX2: %[[P:.*]]:2 = tcc.ukernel "conv2d" ins(%[[D]], %{{.*}} : tensor<1x16x5x5xf32>, tensor<{{[0-9]+}}xf32>, tensor<8xf32>)
// AVX2: return %[[P]]#0
func.func @depthwise5x5_pointwise(%x: tensor<1x16x9x9xf32>) -> tensor<1x8x5x5xf32> {
  %dw = tcc.constant dense<0.25> : tensor<16x1x5x5xf32>
  %pw = tcc.constant dense<0.5> : tensor<8x16x1x1xf32>
  %pb = tcc.constant dense<2.0> : tensor<8xf32>
  %0 = tcc.fused "contraction"(%x, %dw, %pw, %pb : tensor<1x16x9x9xf32>, tensor<16x1x5x5xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32> {
  ^bb0(%a0: tensor<1x16x9x9xf32>, %a1: tensor<16x1x5x5xf32>, %a2: tensor<8x16x1x1xf32>, %a3: tensor<8xf32>):
    %c = tcc.conv %a0, %a1 strides = [2, 2] padding = [2, 2, 2, 2] dilations = [1, 1] groups = 16 : (tensor<1x16x9x9xf32>, tensor<16x1x5x5xf32>) -> tensor<1x16x5x5xf32>
    %k = tcc.clamp %c min = 0.0 max = 6.0 : tensor<1x16x5x5xf32>
    %p = tcc.conv %k, %a2, %a3 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x16x5x5xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>
    tcc.yield %p : tensor<1x8x5x5xf32>
  }
  return %0 : tensor<1x8x5x5xf32>
}

// -----

// Tests that an expansion grouped with the depthwise/pointwise pair after
// it is one block_conv2d call on AVX-512 where its expanded tensor is
// large (96 x 112 x 112: 4.8 MB): its three constant weights packed for
// the channel-blocked kernels (exp_flags = TCC_UK_PACKED_BLOCKED: W^T of
// the expansion 16 x 96, the taps 96 x 9, W^T of the projection 96 x 32,
// its 24 filters padded to two vectors), each convolution's bias and clamp
// passed, the pair's window as the depthwise one's. The AVX2 kernels make
// three conv2d calls.
// CHECK-LABEL: func @expansion_block
// CHECK: %[[R:.*]]:2 = tcc.ukernel "block_conv2d" ins(%{{.*}} : tensor<1x16x112x112xf32>, tensor<1536xf32>, tensor<96xf32>, tensor<864xf32>, tensor<96xf32>, tensor<3072xf32>, tensor<24xf32>)
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<1x24x56x56xf32>, tensor<{{[0-9]+}}xi8>)
// CHECK-SAME: c = 96 : i64
// CHECK-SAME: dw_clamp_max = 6.000000e+00 : f32, dw_clamp_min = 0.000000e+00 : f32, dw_has_clamp = 1 : i64
// CHECK-SAME: exp_c = 16 : i64, exp_clamp_max = 6.000000e+00 : f32, exp_clamp_min = 0.000000e+00 : f32, exp_dilation_h = 1 : i64, exp_dilation_w = 1 : i64, exp_flags = 32 : i64, exp_h = 112 : i64, exp_has_clamp = 1 : i64, exp_kh = 1 : i64, exp_kw = 1 : i64, exp_n = 1 : i64, exp_pad_bottom = 0 : i64, exp_pad_left = 0 : i64, exp_pad_right = 0 : i64, exp_pad_top = 0 : i64, exp_stride_h = 1 : i64, exp_stride_w = 1 : i64, exp_w = 112 : i64
// CHECK-SAME: f = 24 : i64, flags = 0 : i64, h = 112 : i64, has_bias = 1 : i64, has_clamp = 0 : i64, has_dw_bias = 1 : i64, has_exp_bias = 1 : i64, has_residual = 0 : i64
// CHECK-SAME: stride_h = 2 : i64
// CHECK: return %[[R]]#0
// AVX2-LABEL: func @expansion_block
// AVX2: %[[E:.*]]:2 = tcc.ukernel "conv2d" ins(%{{.*}} : tensor<1x16x112x112xf32>
// AVX2: %[[D:.*]] = tcc.ukernel "conv2d" ins(%[[E]]#0, %{{.*}} : tensor<1x96x112x112xf32>
// AVX2: %[[P:.*]] = tcc.ukernel "conv2d" ins(%[[D]], %{{.*}} : tensor<1x96x56x56xf32>
// AVX2: return %[[P]]
func.func @expansion_block(%x: tensor<1x16x112x112xf32>) -> tensor<1x24x56x56xf32> {
  %ew = tcc.constant dense<0.125> : tensor<96x16x1x1xf32>
  %eb = tcc.constant dense<0.5> : tensor<96xf32>
  %dw = tcc.constant dense<0.25> : tensor<96x1x3x3xf32>
  %db = tcc.constant dense<1.0> : tensor<96xf32>
  %pw = tcc.constant dense<0.5> : tensor<24x96x1x1xf32>
  %pb = tcc.constant dense<2.0> : tensor<24xf32>
  %0 = tcc.fused "contraction"(%x, %ew, %eb, %dw, %db, %pw, %pb : tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>, tensor<96xf32>, tensor<96x1x3x3xf32>, tensor<96xf32>, tensor<24x96x1x1xf32>, tensor<24xf32>) -> tensor<1x24x56x56xf32> {
  ^bb0(%a0: tensor<1x16x112x112xf32>, %a1: tensor<96x16x1x1xf32>, %a2: tensor<96xf32>, %a3: tensor<96x1x3x3xf32>, %a4: tensor<96xf32>, %a5: tensor<24x96x1x1xf32>, %a6: tensor<24xf32>):
    %e = tcc.conv %a0, %a1, %a2 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>, tensor<96xf32>) -> tensor<1x96x112x112xf32>
    %ek = tcc.clamp %e min = 0.0 max = 6.0 : tensor<1x96x112x112xf32>
    %c = tcc.conv %ek, %a3, %a4 strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 96 : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>, tensor<96xf32>) -> tensor<1x96x56x56xf32>
    %k = tcc.clamp %c min = 0.0 max = 6.0 : tensor<1x96x56x56xf32>
    %p = tcc.conv %k, %a5, %a6 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x96x56x56xf32>, tensor<24x96x1x1xf32>, tensor<24xf32>) -> tensor<1x24x56x56xf32>
    tcc.yield %p : tensor<1x24x56x56xf32>
  }
  return %0 : tensor<1x24x56x56xf32>
}

// -----

// Tests that a block whose depthwise weight is not a constant keeps its 1x1
// weights packed as the GEMMs read them (exp_flags and flags =
// TCC_UK_PACKED_A) and its taps as they are: the kernels lay the weights
// out for the channel-blocked layout at each call.
// CHECK-LABEL: func @expansion_block_weights_unknown
// CHECK: tcc.ukernel "block_conv2d" ins(%{{.*}} : tensor<1x16x112x112xf32>, tensor<{{[0-9]+}}xf32>, tensor<96x1x3x3xf32>, tensor<{{[0-9]+}}xf32>)
// CHECK-SAME: exp_flags = 8 : i64
// CHECK-SAME: flags = 8 : i64
func.func @expansion_block_weights_unknown(%x: tensor<1x16x112x112xf32>, %dwv: tensor<96x1x3x3xf32>) -> tensor<1x24x56x56xf32> {
  %ew = tcc.constant dense<0.125> : tensor<96x16x1x1xf32>
  %pw = tcc.constant dense<0.5> : tensor<24x96x1x1xf32>
  %0 = tcc.fused "contraction"(%x, %ew, %dwv, %pw : tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>, tensor<96x1x3x3xf32>, tensor<24x96x1x1xf32>) -> tensor<1x24x56x56xf32> {
  ^bb0(%a0: tensor<1x16x112x112xf32>, %a1: tensor<96x16x1x1xf32>, %a3: tensor<96x1x3x3xf32>, %a5: tensor<24x96x1x1xf32>):
    %e = tcc.conv %a0, %a1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x112x112xf32>
    %ek = tcc.clamp %e min = 0.0 max = 6.0 : tensor<1x96x112x112xf32>
    %c = tcc.conv %ek, %a3 strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 96 : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x56x56xf32>
    %k = tcc.clamp %c min = 0.0 max = 6.0 : tensor<1x96x56x56xf32>
    %p = tcc.conv %k, %a5 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x96x56x56xf32>, tensor<24x96x1x1xf32>) -> tensor<1x24x56x56xf32>
    tcc.yield %p : tensor<1x24x56x56xf32>
  }
  return %0 : tensor<1x24x56x56xf32>
}

// -----

// Tests that a stem (a 3x3 stride-2 convolution from the image, bias and
// relu6) grouped with the pair after it is one block_conv2d call on
// AVX-512: its window as the exp_ parameters, its weights packed for the
// im2col GEMM.
// CHECK-LABEL: func @stem_block
// CHECK: %[[R:.*]]:2 = tcc.ukernel "block_conv2d" ins(%{{.*}} : tensor<1x3x224x224xf32>, tensor<{{[0-9]+}}xf32>, tensor<32xf32>, tensor<32x1x3x3xf32>, tensor<{{[0-9]+}}xf32>)
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<1x16x112x112xf32>, tensor<{{[0-9]+}}xi8>)
// CHECK-SAME: c = 32 : i64
// CHECK-SAME: exp_c = 3 : i64, {{.*}}exp_flags = 8 : i64, exp_h = 224 : i64, exp_has_clamp = 1 : i64, exp_kh = 3 : i64, exp_kw = 3 : i64, exp_n = 1 : i64, exp_pad_bottom = 1 : i64, exp_pad_left = 1 : i64, exp_pad_right = 1 : i64, exp_pad_top = 1 : i64, exp_stride_h = 2 : i64, exp_stride_w = 2 : i64, exp_w = 224 : i64
// CHECK-SAME: has_bias = 0 : i64, has_clamp = 0 : i64, has_dw_bias = 0 : i64, has_exp_bias = 1 : i64
// CHECK-SAME: stride_h = 1 : i64
// CHECK: return %[[R]]#0
// AVX2-LABEL: func @stem_block
// AVX2-COUNT-3: tcc.ukernel "conv2d"
// AVX2-NOT: tcc.ukernel
// AVX2: return
func.func @stem_block(%x: tensor<1x3x224x224xf32>) -> tensor<1x16x112x112xf32> {
  %ew = tcc.constant dense<0.125> : tensor<32x3x3x3xf32>
  %eb = tcc.constant dense<0.5> : tensor<32xf32>
  %dw = tcc.constant dense<0.25> : tensor<32x1x3x3xf32>
  %pw = tcc.constant dense<0.5> : tensor<16x32x1x1xf32>
  %0 = tcc.fused "contraction"(%x, %ew, %eb, %dw, %pw : tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>, tensor<32x1x3x3xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x112x112xf32> {
  ^bb0(%a0: tensor<1x3x224x224xf32>, %a1: tensor<32x3x3x3xf32>, %a2: tensor<32xf32>, %a3: tensor<32x1x3x3xf32>, %a4: tensor<16x32x1x1xf32>):
    %e = tcc.conv %a0, %a1, %a2 strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
    %ek = tcc.clamp %e min = 0.0 max = 6.0 : tensor<1x32x112x112xf32>
    %c = tcc.conv %ek, %a3 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 32 : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x112x112xf32>
    %p = tcc.conv %c, %a4 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x32x112x112xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x112x112xf32>
    tcc.yield %p : tensor<1x16x112x112xf32>
  }
  return %0 : tensor<1x16x112x112xf32>
}

// -----

// Tests that a first convolution the kernels run as Winograd (3x3 stride
// 1, 16 channels) stays its own conv2d call, large as its output is (1
// MiB), and the pair after it one dwpw_conv2d call.
// CHECK-LABEL: func @winograd_first_stays_apart
// CHECK: %[[E:[0-9]+]]:2 = tcc.ukernel "conv2d" ins(%{{.*}}, %{{.*}} : tensor<1x16x128x128xf32>, tensor<{{[0-9]+}}xf32>)
// CHECK-SAME: kh = 3 : i64
// CHECK: tcc.ukernel "dwpw_conv2d" ins(%[[E]]#0,
// CHECK-NOT: block_conv2d
// CHECK: return
func.func @winograd_first_stays_apart(%x: tensor<1x16x128x128xf32>) -> tensor<1x8x128x128xf32> {
  %ew = tcc.constant dense<0.125> : tensor<16x16x3x3xf32>
  %dw = tcc.constant dense<0.25> : tensor<16x1x3x3xf32>
  %pw = tcc.constant dense<0.5> : tensor<8x16x1x1xf32>
  %0 = tcc.fused "contraction"(%x, %ew, %dw, %pw : tensor<1x16x128x128xf32>, tensor<16x16x3x3xf32>, tensor<16x1x3x3xf32>, tensor<8x16x1x1xf32>) -> tensor<1x8x128x128xf32> {
  ^bb0(%a0: tensor<1x16x128x128xf32>, %a1: tensor<16x16x3x3xf32>, %a2: tensor<16x1x3x3xf32>, %a3: tensor<8x16x1x1xf32>):
    %e = tcc.conv %a0, %a1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x16x128x128xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x128x128xf32>
    %c = tcc.conv %e, %a2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 16 : (tensor<1x16x128x128xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x128x128xf32>
    %p = tcc.conv %c, %a3 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x16x128x128xf32>, tensor<8x16x1x1xf32>) -> tensor<1x8x128x128xf32>
    tcc.yield %p : tensor<1x8x128x128xf32>
  }
  return %0 : tensor<1x8x128x128xf32>
}

// -----

// Tests that a block whose expanded tensor stays in cache between calls
// (6 x 6 x 6 here) is the expansion's conv2d call and the pair's
// dwpw_conv2d call on AVX-512, the residual going to the pair.
// CHECK-LABEL: func @expansion_block_split
// CHECK: %[[E:[0-9]+]]:2 = tcc.ukernel "conv2d" ins(%{{.*}}, %{{.*}} : tensor<1x3x6x6xf32>, tensor<{{[0-9]+}}xf32>)
// CHECK-SAME: f = 6 : i64
// CHECK: %[[P:.*]]:2 = tcc.ukernel "dwpw_conv2d" ins(%[[E]]#0, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x6x6x6xf32>, tensor<6x1x3x3xf32>, tensor<{{[0-9]+}}xf32>, tensor<1x4x6x6xf32>)
// CHECK-SAME: has_residual = 1 : i64
// CHECK: return %[[P]]#0
// AVX2-LABEL: func @expansion_block_split
// AVX2-COUNT-3: tcc.ukernel "conv2d"
// AVX2-NOT: tcc.ukernel
// AVX2: return
func.func @expansion_block_split(%x: tensor<1x3x6x6xf32>, %r: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %ew = tcc.constant dense<0.125> : tensor<6x3x1x1xf32>
  %dw = tcc.constant dense<0.25> : tensor<6x1x3x3xf32>
  %pw = tcc.constant dense<0.5> : tensor<4x6x1x1xf32>
  %0 = tcc.fused "contraction"(%x, %ew, %dw, %pw, %r : tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>, tensor<6x1x3x3xf32>, tensor<4x6x1x1xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a0: tensor<1x3x6x6xf32>, %a1: tensor<6x3x1x1xf32>, %a2: tensor<6x1x3x3xf32>, %a3: tensor<4x6x1x1xf32>, %a4: tensor<1x4x6x6xf32>):
    %e = tcc.conv %a0, %a1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x6x6xf32>, tensor<6x3x1x1xf32>) -> tensor<1x6x6x6xf32>
    %c = tcc.conv %e, %a2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 6 : (tensor<1x6x6x6xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
    %p = tcc.conv %c, %a3 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x6x6x6xf32>, tensor<4x6x1x1xf32>) -> tensor<1x4x6x6xf32>
    %s = tcc.add %p, %a4 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    tcc.yield %s : tensor<1x4x6x6xf32>
  }
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Tests that a GELU after a matmul's bias is the sgemm's activation (1: the
// erf form, 2: tanh).
// CHECK-LABEL: func @linear_gelu
// CHECK: tcc.ukernel "sgemm"
// CHECK-SAME: activation = 2 : i64
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_gelu(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = tcc.constant dense<0.5> : tensor<16x8xf32>
  %b = tcc.constant dense<1.0> : tensor<8xf32>
  %0 = tcc.fused "contraction"(%x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a0: tensor<4x16xf32>, %a1: tensor<16x8xf32>, %a2: tensor<8xf32>):
    %m = tcc.matmul %a0, %a1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %s = tcc.add %m, %a2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %g = tcc.gelu %s approximate = tanh : tensor<4x8xf32>
    tcc.yield %g : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that a convolution's SiLU (3) and hard swish (4) are the conv2d
// kernel's activation, the hard swish's constants seen through the group's
// arguments; and that a hard sigmoid of another slope times x is left to
// loops after the kernel.
// CHECK-LABEL: func @conv_gated_activations
// CHECK: tcc.ukernel "conv2d"
// CHECK-SAME: activation = 3 : i64
// CHECK: tcc.ukernel "conv2d"
// CHECK-SAME: activation = 4 : i64
// CHECK: %[[C:.*]]:2 = tcc.ukernel "conv2d"
// CHECK-SAME: activation = 0 : i64
// CHECK: linalg.generic {{.*}} ins(%[[C]]#0,
// CHECK: return
func.func @conv_gated_activations(%x: tensor<1x2x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %w = tcc.constant dense<0.5> : tensor<4x2x3x3xf32>
  %sixth = tcc.constant dense<0.166666672> : tensor<f32>
  %fifth = tcc.constant dense<0.2> : tensor<f32>
  %half = tcc.constant dense<0.5> : tensor<f32>
  %0 = tcc.fused "contraction"(%x, %w : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a0: tensor<1x2x6x6xf32>, %a1: tensor<4x2x3x3xf32>):
    %c = tcc.conv %a0, %a1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
    %g = tcc.sigmoid %c : tensor<1x4x6x6xf32>
    %y = tcc.mul %c, %g : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    tcc.yield %y : tensor<1x4x6x6xf32>
  }
  %1 = tcc.fused "contraction"(%x, %w, %sixth, %half : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<f32>, tensor<f32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a0: tensor<1x2x6x6xf32>, %a1: tensor<4x2x3x3xf32>, %a2: tensor<f32>, %a3: tensor<f32>):
    %c = tcc.conv %a0, %a1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
    %m = tcc.mul %a2, %c : (tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %s = tcc.add %a3, %m : (tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %g = tcc.clamp %s min = 0.000000e+00 max = 1.000000e+00 : tensor<1x4x6x6xf32>
    %y = tcc.mul %g, %c : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    tcc.yield %y : tensor<1x4x6x6xf32>
  }
  %2 = tcc.fused "contraction"(%x, %w, %fifth, %half : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<f32>, tensor<f32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a0: tensor<1x2x6x6xf32>, %a1: tensor<4x2x3x3xf32>, %a2: tensor<f32>, %a3: tensor<f32>):
    %c = tcc.conv %a0, %a1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
    %m = tcc.mul %c, %a2 : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
    %s = tcc.add %m, %a3 : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
    %g = tcc.clamp %s min = 0.000000e+00 max = 1.000000e+00 : tensor<1x4x6x6xf32>
    %y = tcc.mul %c, %g : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    tcc.yield %y : tensor<1x4x6x6xf32>
  }
  return %0, %1, %2 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Tests that a 2-D max pooling of stride 1 or 2 is one maxpool2d call with
// the AVX-512 and the AVX2 kernels (padding and output size as parameters,
// no padded copy of the input), and that one of stride 3 stays a padded
// linalg window reduction, which the kernels do not vectorize.
// CHECK-LABEL: func @max_pool
// CHECK-NOT: tensor.pad
// CHECK: %[[R:.*]] = tcc.ukernel "maxpool2d" ins(%{{.*}} : tensor<1x4x9x9xf32>) outs(%{{.*}} : tensor<1x4x5x5xf32>)
// CHECK-SAME: kh = 3 : i64
// CHECK-SAME: oh = 5 : i64, ow = 5 : i64, pad_left = 1 : i64, pad_top = 1 : i64, stride_h = 2 : i64
// CHECK: return %[[R]]
// AVX2-LABEL: func @max_pool
// AVX2-NOT: tensor.pad
// AVX2: tcc.ukernel "maxpool2d"
// CHECK-LABEL: func @max_pool_stride3
// CHECK: tensor.pad
// CHECK: linalg.generic
// CHECK-NOT: tcc.ukernel
// AVX2-LABEL: func @max_pool_stride3
// AVX2: tensor.pad
// AVX2: linalg.generic
// AVX2-NOT: tcc.ukernel
func.func @max_pool(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32> {
  %0 = tcc.max_pool %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] : tensor<1x4x9x9xf32> -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}
func.func @max_pool_stride3(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x3x3xf32> {
  %0 = tcc.max_pool %x kernel = [3, 3] strides = [3, 3] padding = [1, 1, 1, 1] dilations = [1, 1] : tensor<1x4x9x9xf32> -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// Tests that a 2-D average pooling of stride 1 or 2 is one avgpool2d call
// with either ISA's kernels (its end pads and count_include_pad as
// parameters, no padded copy, no division of its own), and that one of
// stride 3 stays linalg's pad, window sum and division.
// CHECK-LABEL: func @avg_pool
// CHECK-NOT: tensor.pad
// CHECK: %[[R:.*]] = tcc.ukernel "avgpool2d" ins(%{{.*}} : tensor<1x8x12x12xf32>) outs(%{{.*}} : tensor<1x8x12x12xf32>)
// CHECK-SAME: count_include_pad = 1 : i64
// CHECK-SAME: kh = 3 : i64
// CHECK-SAME: oh = 12 : i64, ow = 12 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64
// CHECK-NOT: arith.divf
// CHECK: return %[[R]]
// AVX2-LABEL: func @avg_pool
// AVX2-NOT: tensor.pad
// AVX2: tcc.ukernel "avgpool2d"
// CHECK-LABEL: func @avg_pool_stride2_exclusive
// CHECK: tcc.ukernel "avgpool2d"
// CHECK-SAME: count_include_pad = 0 : i64
// CHECK-SAME: stride_h = 2 : i64
// CHECK-LABEL: func @avg_pool_stride3
// CHECK: tensor.pad
// CHECK: linalg.generic
// CHECK: arith.divf
// CHECK-NOT: tcc.ukernel
// AVX2-LABEL: func @avg_pool_stride3
// AVX2-NOT: tcc.ukernel
func.func @avg_pool(%x: tensor<1x8x12x12xf32>) -> tensor<1x8x12x12xf32> {
  %0 = tcc.avg_pool %x kernel = [3, 3] strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] count_include_pad : tensor<1x8x12x12xf32> -> tensor<1x8x12x12xf32>
  return %0 : tensor<1x8x12x12xf32>
}
func.func @avg_pool_stride2_exclusive(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32> {
  %0 = tcc.avg_pool %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] : tensor<1x4x9x9xf32> -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}
func.func @avg_pool_stride3(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x3x3xf32> {
  %0 = tcc.avg_pool %x kernel = [3, 3] strides = [3, 3] padding = [1, 1, 1, 1] dilations = [1, 1] : tensor<1x4x9x9xf32> -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// Tests that an "attention" group (tcc-fuse-attention) becomes one attention
// call: Q, K and V addressed where their head views lie (two heads of 4
// side by side in rows of 8; K as given, transposed), the output written
// into its rows likewise, the divisor as the scale 1/2, and scratch.
// CHECK-LABEL: func @attention_heads
// CHECK: tcc.ukernel "attention" ins(%arg0, %arg1, %arg2 : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) outs(%{{.*}}, %{{.*}} : tensor<1x8x8xf32>, tensor<{{[0-9]+}}xi8>)
// CHECK-SAME: batch = 2 : i64, d = 4 : i64, dv = 4 : i64
// CHECK-SAME: flags = 2 : i64, ldk = 8 : i64, ldm = 0 : i64, ldo = 8 : i64, ldq = 8 : i64, ldv = 8 : i64, mask_kind = 0 : i64, scale = 5.000000e-01 : f32, sk = 8 : i64, sq = 8 : i64, stride_k = 4 : i64, stride_m = 0 : i64, stride_o = 4 : i64, stride_q = 4 : i64, stride_v = 4 : i64
// AVX2-LABEL: func @attention_heads
// AVX2: tcc.ukernel "attention"
func.func @attention_heads(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>, %v: tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
  %c = tcc.constant dense<2.0> : tensor<f32>
  %o = tcc.fused "attention"(%q, %k, %c, %v : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<f32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
  ^bb0(%a0: tensor<1x8x8xf32>, %a1: tensor<1x8x8xf32>, %a2: tensor<f32>, %a3: tensor<1x8x8xf32>):
    %0 = tcc.reshape %a0 : tensor<1x8x8xf32> -> tensor<1x8x2x4xf32>
    %1 = tcc.transpose %0 perm = [0, 2, 1, 3] : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
    %2 = tcc.reshape %a1 : tensor<1x8x8xf32> -> tensor<1x8x2x4xf32>
    %3 = tcc.transpose %2 perm = [0, 2, 3, 1] : tensor<1x8x2x4xf32> -> tensor<1x2x4x8xf32>
    %4 = tcc.matmul %1, %3 : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
    %5 = tcc.div %4, %a2 : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
    %6 = tcc.reduce_max %5 axes = [3] keepdims : tensor<1x2x8x8xf32> -> tensor<1x2x8x1xf32>
    %7 = tcc.sub %5, %6 : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x8xf32>
    %8 = tcc.exp %7 : tensor<1x2x8x8xf32>
    %9 = tcc.reduce_sum %8 axes = [3] keepdims : tensor<1x2x8x8xf32> -> tensor<1x2x8x1xf32>
    %10 = tcc.div %8, %9 : (tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x8xf32>
    %11 = tcc.reshape %a3 : tensor<1x8x8xf32> -> tensor<1x8x2x4xf32>
    %12 = tcc.transpose %11 perm = [0, 2, 1, 3] : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
    %13 = tcc.matmul %10, %12 : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
    %14 = tcc.transpose %13 perm = [0, 2, 1, 3] : tensor<1x2x8x4xf32> -> tensor<1x8x2x4xf32>
    %15 = tcc.reshape %14 : tensor<1x8x2x4xf32> -> tensor<1x8x8xf32>
    tcc.yield %15 : tensor<1x8x8xf32>
  }
  return %o : tensor<1x8x8xf32>
}

// -----

// Tests that a causal mask (a boolean mask selecting -inf) is the call's
// fourth input, read as it lies (a row of 8 for each query), and that an
// additive mask of one row for every query has a leading dimension of 0.
// CHECK-LABEL: func @attention_masks
// CHECK: tcc.ukernel "attention" ins(%arg0, %arg1, %arg2, %arg3 : tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<8x8xi1>)
// CHECK-SAME: fill = 0xFF800000 : f32, flags = 0 : i64, ldk = 8 : i64, ldm = 8 : i64, ldo = 4 : i64, ldq = 4 : i64, ldv = 4 : i64, mask_kind = 2 : i64, scale = 1.000000e+00 : f32
// CHECK: tcc.ukernel "attention" ins(%arg0, %arg1, %arg2, %arg4 : tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<1x8xf32>)
// CHECK-SAME: ldm = 0 : i64
// CHECK-SAME: mask_kind = 1 : i64, scale = 2.500000e-01 : f32
// AVX2-LABEL: func @attention_masks
// AVX2-COUNT-2: tcc.ukernel "attention"
func.func @attention_masks(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>, %m: tensor<8x8xi1>, %pad: tensor<1x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %inf = tcc.constant dense<0xFF800000> : tensor<f32>
  %quarter = tcc.constant dense<0.25> : tensor<1xf32>
  %o = tcc.fused "attention"(%q, %kt, %m, %inf, %v : tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x8xi1>, tensor<f32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x4xf32>, %a1: tensor<4x8xf32>, %a2: tensor<8x8xi1>, %a3: tensor<f32>, %a4: tensor<8x4xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %1 = tcc.select %a2, %a3, %0 : (tensor<8x8xi1>, tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = tcc.reduce_max %1 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %3 = tcc.sub %1, %2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %4 = tcc.exp %3 : tensor<8x8xf32>
    %5 = tcc.reduce_sum %4 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %6 = tcc.div %4, %5 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %7 = tcc.matmul %6, %a4 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %7 : tensor<8x4xf32>
  }
  %o2 = tcc.fused "attention"(%q, %kt, %quarter, %pad, %v : tensor<8x4xf32>, tensor<4x8xf32>, tensor<1xf32>, tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x4xf32>, %a1: tensor<4x8xf32>, %a2: tensor<1xf32>, %a3: tensor<1x8xf32>, %a4: tensor<8x4xf32>):
    %0 = tcc.matmul %a0, %a1 : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %1 = tcc.mul %0, %a2 : (tensor<8x8xf32>, tensor<1xf32>) -> tensor<8x8xf32>
    %2 = tcc.add %1, %a3 : (tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
    %3 = tcc.reduce_max %2 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %4 = tcc.sub %2, %3 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %5 = tcc.exp %4 : tensor<8x8xf32>
    %6 = tcc.reduce_sum %5 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %7 = tcc.div %5, %6 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %8 = tcc.matmul %7, %a4 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %8 : tensor<8x4xf32>
  }
  return %o, %o2 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Tests that Q and K each scaled by a constant (0.5 and 0.25) before the
// scores' product become the call's scale (0.125), the multiplies not run.
// CHECK-LABEL: func @attention_scaled_operands
// CHECK-NOT: linalg.generic
// CHECK: tcc.ukernel "attention" ins(%arg0, %arg1, %arg2 : tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x4xf32>)
// CHECK-SAME: scale = 1.250000e-01 : f32
// AVX2-LABEL: func @attention_scaled_operands
// AVX2: tcc.ukernel "attention"
func.func @attention_scaled_operands(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %half = tcc.constant dense<0.5> : tensor<1xf32>
  %quarter = tcc.constant dense<0.25> : tensor<1xf32>
  %o = tcc.fused "attention"(%q, %half, %kt, %quarter, %v : tensor<8x4xf32>, tensor<1xf32>, tensor<4x8xf32>, tensor<1xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a0: tensor<8x4xf32>, %a1: tensor<1xf32>, %a2: tensor<4x8xf32>, %a3: tensor<1xf32>, %a4: tensor<8x4xf32>):
    %0 = tcc.mul %a0, %a1 : (tensor<8x4xf32>, tensor<1xf32>) -> tensor<8x4xf32>
    %1 = tcc.mul %a2, %a3 : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
    %2 = tcc.matmul %0, %1 : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %3 = tcc.reduce_max %2 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %4 = tcc.sub %2, %3 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %5 = tcc.exp %4 : tensor<8x8xf32>
    %6 = tcc.reduce_sum %5 axes = [1] keepdims : tensor<8x8xf32> -> tensor<8x1xf32>
    %7 = tcc.div %5, %6 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
    %8 = tcc.matmul %7, %a4 : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    tcc.yield %8 : tensor<8x4xf32>
  }
  return %o : tensor<8x4xf32>
}

// -----

// Tests that a group of a 1-channel 3x3 convolution, its bias and relu and
// the 2x2 pooling after them is one conv2d call that pools (pool = 2, its
// output the pooled shape) where the kernels can (AVX-512), and a conv2d
// call with the epilogue then a maxpool2d call where they cannot (AVX2).
// CHECK-LABEL: func @conv_pool
// CHECK: tcc.ukernel "conv2d" ins({{.*}}) outs(%{{.*}} : tensor<2x16x4x4xf32>)
// CHECK-SAME: has_bias = 1 : i64, has_clamp = 1 : i64
// CHECK-SAME: pool = 2 : i64
// CHECK-NOT: maxpool2d
// AVX2-LABEL: func @conv_pool
// AVX2: tcc.ukernel "conv2d" {{.*}} -> tensor<2x16x8x8xf32>
// AVX2-NOT: pool = 2
// AVX2: tcc.ukernel "maxpool2d"
func.func @conv_pool(%x: tensor<2x1x8x8xf32>) -> tensor<2x16x4x4xf32> {
  %w = tcc.constant dense<0.5> : tensor<16x1x3x3xf32>
  %b = tcc.constant dense<0.25> : tensor<16xf32>
  %0 = tcc.fused "contraction"(%x, %w, %b : tensor<2x1x8x8xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  ^bb0(%a0: tensor<2x1x8x8xf32>, %a1: tensor<16x1x3x3xf32>, %a2: tensor<16xf32>):
    %c = tcc.conv %a0, %a1, %a2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<2x1x8x8xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<2x16x8x8xf32>
    %r = tcc.relu %c : tensor<2x16x8x8xf32>
    %p = tcc.max_pool %r kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x16x8x8xf32> -> tensor<2x16x4x4xf32>
    tcc.yield %p : tensor<2x16x4x4xf32>
  }
  return %0 : tensor<2x16x4x4xf32>
}

// -----

// Tests that a group of a 3x3 stride-2 stem over 3 channels, its bias and
// relu and the 3x3 stride-2 pooling after them in ceil mode is one conv2d
// call that pools by bands of rows (pool = 1, the pooling's window as
// parameters, its output the pooled shape) with either ISA's kernels.
// CHECK-LABEL: func @conv_stem_pool
// CHECK: tcc.ukernel "conv2d" ins({{.*}}) outs(%{{.*}}, %{{.*}} : tensor<1x16x8x8xf32>, tensor<{{[0-9]+}}xi8>)
// CHECK-SAME: pool = 1 : i64, pool_kh = 3 : i64, pool_kw = 3 : i64, pool_oh = 8 : i64, pool_ow = 8 : i64, pool_pad_left = 0 : i64, pool_pad_top = 0 : i64, pool_stride_h = 2 : i64, pool_stride_w = 2 : i64
// CHECK-NOT: maxpool2d
// AVX2-LABEL: func @conv_stem_pool
// AVX2: tcc.ukernel "conv2d" {{.*}} pool = 1 : i64
// AVX2-SAME: -> tensor<1x16x8x8xf32>
// AVX2-NOT: maxpool2d
func.func @conv_stem_pool(%x: tensor<1x3x33x33xf32>) -> tensor<1x16x8x8xf32> {
  %w = tcc.constant dense<0.5> : tensor<16x3x3x3xf32>
  %b = tcc.constant dense<0.25> : tensor<16xf32>
  %0 = tcc.fused "contraction"(%x, %w, %b : tensor<1x3x33x33xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  ^bb0(%a0: tensor<1x3x33x33xf32>, %a1: tensor<16x3x3x3xf32>, %a2: tensor<16xf32>):
    %c = tcc.conv %a0, %a1, %a2 strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x33x33xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
    %r = tcc.relu %c : tensor<1x16x16x16xf32>
    %p = tcc.max_pool %r kernel = [3, 3] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<1x16x16x16xf32> -> tensor<1x16x8x8xf32>
    tcc.yield %p : tensor<1x16x8x8xf32>
  }
  return %0 : tensor<1x16x8x8xf32>
}

// Tests that a pooling tcc-fuse grouped with a convolution the kernels do
// not pool (one input channel: refused by bands, and not a 2x2) lowers to
// the convolution's call, with its epilogue and no pooling, then a
// maxpool2d call, with either ISA's kernels.
// CHECK-LABEL: func @conv_pool_apart
// CHECK: %[[C:.*]] = tcc.ukernel "conv2d" {{.*}} outs(%{{.*}} : tensor<1x16x12x12xf32>)
// CHECK-NOT: pool = 
// CHECK: tcc.ukernel "maxpool2d" ins(%[[C]] : tensor<1x16x12x12xf32>) outs(%{{.*}} : tensor<1x16x6x6xf32>)
// AVX2-LABEL: func @conv_pool_apart
// AVX2: tcc.ukernel "conv2d"
// AVX2-NOT: pool = 
// AVX2: tcc.ukernel "maxpool2d"
func.func @conv_pool_apart(%x: tensor<1x1x12x12xf32>) -> tensor<1x16x6x6xf32> {
  %w = tcc.constant dense<0.5> : tensor<16x1x3x3xf32>
  %b = tcc.constant dense<0.25> : tensor<16xf32>
  %0 = tcc.fused "contraction"(%x, %w, %b : tensor<1x1x12x12xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32> {
  ^bb0(%a0: tensor<1x1x12x12xf32>, %a1: tensor<16x1x3x3xf32>, %a2: tensor<16xf32>):
    %c = tcc.conv %a0, %a1, %a2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x1x12x12xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<1x16x12x12xf32>
    %r = tcc.relu %c : tensor<1x16x12x12xf32>
    %p = tcc.max_pool %r kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] : tensor<1x16x12x12xf32> -> tensor<1x16x6x6xf32>
    tcc.yield %p : tensor<1x16x6x6xf32>
  }
  return %0 : tensor<1x16x6x6xf32>
}

// -----

// Tests that a 1x1 convolution's group with a per-channel scale, shift and
// relu before it (tcc-fuse's prologue) is one conv2d call that takes the
// scale and the shift as inputs after the bias, and that a prologue of a
// scale and a relu alone passes the scale alone.
// CHECK-LABEL: func @conv_prologue
// CHECK-SAME: (%[[X:.*]]: tensor<1x16x5x5xf32>, %[[S:.*]]: tensor<16x1x1xf32>, %[[T:.*]]: tensor<16x1x1xf32>
// CHECK: tcc.ukernel "conv2d" ins(%[[X]], %{{.*}}, %{{.*}}, %[[S]], %[[T]] : tensor<1x16x5x5xf32>, tensor<{{[0-9]+}}xf32>, tensor<8xf32>, tensor<16x1x1xf32>, tensor<16x1x1xf32>)
// CHECK-SAME: has_in_scale = 1 : i64, has_in_shift = 1 : i64
// CHECK-SAME: in_relu = 1 : i64
// CHECK: tcc.ukernel "conv2d" ins(%arg3, %{{.*}}, %arg4 : tensor<1x4x5x5xf32>, tensor<{{[0-9]+}}xf32>, tensor<4x1x1xf32>)
// CHECK-SAME: has_in_scale = 1 : i64, has_in_shift = 0 : i64
// CHECK-SAME: in_relu = 1 : i64
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func @conv_prologue
// AVX2: tcc.ukernel "conv2d"{{.*}}in_relu = 1 : i64
// AVX2: tcc.ukernel "conv2d"{{.*}}in_relu = 1 : i64
func.func @conv_prologue(%x: tensor<1x16x5x5xf32>, %s: tensor<16x1x1xf32>, %t: tensor<16x1x1xf32>, %x4: tensor<1x4x5x5xf32>, %s4: tensor<4x1x1xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>) {
  %w = tcc.constant dense<0.5> : tensor<8x16x1x1xf32>
  %b = tcc.constant dense<0.25> : tensor<8xf32>
  %w4 = tcc.constant dense<0.5> : tensor<8x4x1x1xf32>
  %0 = tcc.fused "contraction"(%x, %s, %t, %w, %b : tensor<1x16x5x5xf32>, tensor<16x1x1xf32>, tensor<16x1x1xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32> {
  ^bb0(%a0: tensor<1x16x5x5xf32>, %a1: tensor<16x1x1xf32>, %a2: tensor<16x1x1xf32>, %a3: tensor<8x16x1x1xf32>, %a4: tensor<8xf32>):
    %m = tcc.mul %a0, %a1 : (tensor<1x16x5x5xf32>, tensor<16x1x1xf32>) -> tensor<1x16x5x5xf32>
    %p = tcc.add %m, %a2 : (tensor<1x16x5x5xf32>, tensor<16x1x1xf32>) -> tensor<1x16x5x5xf32>
    %r = tcc.relu %p : tensor<1x16x5x5xf32>
    %c = tcc.conv %r, %a3, %a4 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x16x5x5xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>
    tcc.yield %c : tensor<1x8x5x5xf32>
  }
  %1 = tcc.fused "contraction"(%x4, %s4, %w4 : tensor<1x4x5x5xf32>, tensor<4x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x5x5xf32> {
  ^bb0(%a0: tensor<1x4x5x5xf32>, %a1: tensor<4x1x1xf32>, %a2: tensor<8x4x1x1xf32>):
    %m = tcc.mul %a0, %a1 : (tensor<1x4x5x5xf32>, tensor<4x1x1xf32>) -> tensor<1x4x5x5xf32>
    %r = tcc.relu %m : tensor<1x4x5x5xf32>
    %c = tcc.conv %r, %a2 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x5x5xf32>
    tcc.yield %c : tensor<1x8x5x5xf32>
  }
  return %0, %1 : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
}

// -----

// Tests that a depthwise convolution's group that yields its plane means
// too (tcc-fuse's, a squeeze-and-excitation block) is one conv2d call with
// has_means whose outputs are the convolution's, then the means, and that
// both results come from the call.
// CHECK-LABEL: func @depthwise_plane_means
// CHECK: %[[K:.*]]:2 = tcc.ukernel "conv2d" ins(%arg0, {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<1x32x7x7xf32>, tensor<1x32x1x1xf32>)
// CHECK-SAME: groups = 32 : i64
// CHECK-SAME: has_means = 1 : i64
// CHECK-NOT: linalg.generic
// CHECK: return %[[K]]#0, %[[K]]#1
// AVX2-LABEL: func @depthwise_plane_means
// AVX2: tcc.ukernel "conv2d"{{.*}}has_means = 1 : i64
func.func @depthwise_plane_means(%x: tensor<1x32x7x7xf32>) -> (tensor<1x32x7x7xf32>, tensor<1x32x1x1xf32>) {
  %w = tcc.constant dense<0.5> : tensor<32x1x3x3xf32>
  %b = tcc.constant dense<0.25> : tensor<32xf32>
  %0:2 = tcc.fused "contraction"(%x, %w, %b : tensor<1x32x7x7xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x7x7xf32>, tensor<1x32x1x1xf32> {
  ^bb0(%a0: tensor<1x32x7x7xf32>, %a1: tensor<32x1x3x3xf32>, %a2: tensor<32xf32>):
    %c = tcc.conv %a0, %a1, %a2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 32 : (tensor<1x32x7x7xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x7x7xf32>
    %r = tcc.relu %c : tensor<1x32x7x7xf32>
    %m = tcc.reduce_mean %r axes = [2, 3] keepdims : tensor<1x32x7x7xf32> -> tensor<1x32x1x1xf32>
    tcc.yield %r, %m : tensor<1x32x7x7xf32>, tensor<1x32x1x1xf32>
  }
  return %0#0, %0#1 : tensor<1x32x7x7xf32>, tensor<1x32x1x1xf32>
}

// -----

// Tests that plane means of a convolution with one group (which the
// kernels do not compute) leave the group to the op-by-op lowering: a
// conv2d call, then the mean as a reduction.
// CHECK-LABEL: func @plane_means_apart
// CHECK: %[[C:.*]] = tcc.ukernel "conv2d"
// CHECK-NOT: has_means
// CHECK: linalg.generic
// CHECK: return
// AVX2-LABEL: func @plane_means_apart
// AVX2-NOT: has_means
func.func @plane_means_apart(%x: tensor<1x4x7x7xf32>) -> (tensor<1x8x7x7xf32>, tensor<1x8x1x1xf32>) {
  %w = tcc.constant dense<0.5> : tensor<8x4x3x3xf32>
  %0:2 = tcc.fused "contraction"(%x, %w : tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>, tensor<1x8x1x1xf32> {
  ^bb0(%a0: tensor<1x4x7x7xf32>, %a1: tensor<8x4x3x3xf32>):
    %c = tcc.conv %a0, %a1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : (tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
    %m = tcc.reduce_mean %c axes = [2, 3] keepdims : tensor<1x8x7x7xf32> -> tensor<1x8x1x1xf32>
    tcc.yield %c, %m : tensor<1x8x7x7xf32>, tensor<1x8x1x1xf32>
  }
  return %0#0, %0#1 : tensor<1x8x7x7xf32>, tensor<1x8x1x1xf32>
}

// -----

// Tests that a transpose moving the innermost dimension is one transpose
// call once the dimensions staying together merge (NHWC -> NCHW: 1 x 12 x
// 8 as rows 12, cols 8; [b, r, c] -> [b, c, r] with a batch), and that one
// keeping the innermost dimension stays linalg's.
// CHECK-LABEL: func @transpose
// CHECK: tcc.ukernel "transpose" ins(%{{.*}} : tensor<1x3x4x8xf32>) outs(%{{.*}} : tensor<1x8x3x4xf32>) params {batch = 1 : i64, cols = 8 : i64, rows = 12 : i64}
// CHECK: tcc.ukernel "transpose" ins(%{{.*}} : tensor<2x5x6xf32>) outs(%{{.*}} : tensor<2x6x5xf32>) params {batch = 2 : i64, cols = 6 : i64, rows = 5 : i64}
// CHECK-NOT: tcc.ukernel "transpose"
// CHECK: linalg.transpose
// AVX2-LABEL: func @transpose
// AVX2-COUNT-2: tcc.ukernel "transpose"
func.func @transpose(%x: tensor<1x3x4x8xf32>, %y: tensor<2x5x6xf32>, %z: tensor<2x3x4xf32>) -> (tensor<1x8x3x4xf32>, tensor<2x6x5xf32>, tensor<3x2x4xf32>) {
  %0 = tcc.transpose %x perm = [0, 3, 1, 2] : tensor<1x3x4x8xf32> -> tensor<1x8x3x4xf32>
  %1 = tcc.transpose %y perm = [0, 2, 1] : tensor<2x5x6xf32> -> tensor<2x6x5xf32>
  %2 = tcc.transpose %z perm = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return %0, %1, %2 : tensor<1x8x3x4xf32>, tensor<2x6x5xf32>, tensor<3x2x4xf32>
}
