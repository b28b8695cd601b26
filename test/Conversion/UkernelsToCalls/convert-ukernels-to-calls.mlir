// RUN: tcc-opt %s --convert-ukernels-to-calls --split-input-file -verify-diagnostics | FileCheck %s

// Tests that a bufferized sgemm becomes a call passing addresses and scalar
// parameters (the activation last), with the entry point declared once.
// CHECK: func.func private @tcc_ukabi_sgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32, i64, i64, i64, i64, i64, i64, i64) -> i32
// CHECK-LABEL: func @sgemm
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x2xf32>, %[[C:.*]]: memref<4x2xf32>)
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: %[[ACT:.*]] = arith.constant 1 : i64
// CHECK: call @tcc_ukabi_sgemm({{.*}}, %[[ACT]]) :
// CHECK-NOT: tcc.ukernel
func.func @sgemm(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  tcc.ukernel "sgemm" ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>) params {batch = 1 : i64, m = 4 : i64, n = 2 : i64, k = 8 : i64, lda = 8 : i64, ldb = 2 : i64, ldc = 2 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_c = 8 : i64, flags = 0 : i64, has_bias = 0 : i64, bias_per_row = 0 : i64, has_residual = 0 : i64, ldr = 2 : i64, stride_r = 8 : i64, batch_parallel = 0 : i64, scratch_stride = 0 : i64, activation = 1 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 1.0 : f32}
  return
}

// -----

// Tests that a buffer viewed into the arena is passed at the arena's
// address plus the view's byte shift, also through a reshape of the view,
// and that a convolution's activation (3: SiLU) comes before its pooling
// (absent: 0), then its input prologue (absent: two null addresses and no
// ReLU), then the window of a pooling by bands (absent: eight zeros), then
// the address of its plane means (absent: 0); a pooled one passes its
// kind, 2.
// CHECK-LABEL: func @arena_views
// CHECK-SAME: (%[[ARENA:.*]]: memref<4096xi8>
// CHECK: %[[SHIFT:.*]] = arith.constant 1024 : index
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[AT:.*]] = arith.addi %[[BASE]], %[[SHIFT]]
// CHECK: %[[SILU:.*]] = arith.constant 3 : i64
// CHECK: %[[NOPOOL:.*]] = arith.constant 0 : i64
// CHECK: call @tcc_ukabi_conv2d({{.*}}, %[[SILU]], %[[NOPOOL]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) :
// CHECK: call @tcc_ukabi_conv2d({{.*}}, %c2_i64{{[_0-9]*}}, %{{.*}}, %{{.*}}, %{{.*}}) :
func.func @arena_views(%arena: memref<4096xi8>, %w: memref<8xf32>, %y: memref<1x2x2x2xf32>) {
  %c1024 = arith.constant 1024 : index
  %v = memref.view %arena[%c1024][] : memref<4096xi8> to memref<8xf32>
  %x = memref.expand_shape %v [[0, 1, 2, 3]] output_shape [1, 2, 2, 2] : memref<8xf32> into memref<1x2x2x2xf32>
  tcc.ukernel "conv2d" ins(%x, %w : memref<1x2x2x2xf32>, memref<8xf32>) outs(%y : memref<1x2x2x2xf32>) params {n = 1 : i64, c = 2 : i64, h = 2 : i64, w = 2 : i64, f = 2 : i64, kh = 1 : i64, kw = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 0 : i64, pad_left = 0 : i64, pad_bottom = 0 : i64, pad_right = 0 : i64, groups = 1 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 0 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 0.0 : f32, activation = 3 : i64}
  tcc.ukernel "conv2d" ins(%x, %w : memref<1x2x2x2xf32>, memref<8xf32>) outs(%y : memref<1x2x2x2xf32>) params {n = 1 : i64, c = 2 : i64, h = 2 : i64, w = 2 : i64, f = 2 : i64, kh = 1 : i64, kw = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 0 : i64, pad_left = 0 : i64, pad_bottom = 0 : i64, pad_right = 0 : i64, groups = 1 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 0 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 0.0 : f32, activation = 0 : i64, pool = 2 : i64}
  return
}

// -----

// Tests that a convolution's input prologue passes the scale's and the
// shift's addresses (after the bias and the residual among the inputs)
// and its ReLU after the pooling's kind, before the pooling's window.
// CHECK-LABEL: func @conv_prologue
// CHECK-SAME: (%[[X:.*]]: memref<1x2x2x2xf32>, %[[W:.*]]: memref<8xf32>, %[[S:.*]]: memref<2x1x1xf32>, %[[T:.*]]: memref<2x1x1xf32>, %[[Y:.*]]: memref<1x2x2x2xf32>)
// CHECK: %[[SP:.*]] = memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: %[[SA:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[TP:.*]] = memref.extract_aligned_pointer_as_index %[[T]]
// CHECK: %[[TA:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[RELU:.*]] = arith.constant 1 : i64
// CHECK: call @tcc_ukabi_conv2d({{.*}}, %[[SA]], %[[TA]], %[[RELU]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) :
func.func @conv_prologue(%x: memref<1x2x2x2xf32>, %w: memref<8xf32>, %s: memref<2x1x1xf32>, %t: memref<2x1x1xf32>, %y: memref<1x2x2x2xf32>) {
  tcc.ukernel "conv2d" ins(%x, %w, %s, %t : memref<1x2x2x2xf32>, memref<8xf32>, memref<2x1x1xf32>, memref<2x1x1xf32>) outs(%y : memref<1x2x2x2xf32>) params {n = 1 : i64, c = 2 : i64, h = 2 : i64, w = 2 : i64, f = 2 : i64, kh = 1 : i64, kw = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 0 : i64, pad_left = 0 : i64, pad_bottom = 0 : i64, pad_right = 0 : i64, groups = 1 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 0 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 0.0 : f32, activation = 0 : i64, has_in_scale = 1 : i64, has_in_shift = 1 : i64, in_relu = 1 : i64}
  return
}

// -----

// Tests that a convolution pooled by bands of rows (pool = 1) passes its
// pooling's window last: kernel 3x3, strides 2, pads 1 and 0, output 5x4.
// CHECK-LABEL: func @conv_pool_window
// CHECK: call @tcc_ukabi_conv2d({{.*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}) :
func.func @conv_pool_window(%x: memref<1x2x10x8xf32>, %w: memref<18xf32>, %y: memref<1x1x5x4xf32>) {
  tcc.ukernel "conv2d" ins(%x, %w : memref<1x2x10x8xf32>, memref<18xf32>) outs(%y : memref<1x1x5x4xf32>) params {n = 1 : i64, c = 2 : i64, h = 10 : i64, w = 8 : i64, f = 1 : i64, kh = 3 : i64, kw = 3 : i64, stride_h = 1 : i64, stride_w = 1 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 1 : i64, pad_left = 1 : i64, pad_bottom = 1 : i64, pad_right = 1 : i64, groups = 1 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 0 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 0.0 : f32, activation = 0 : i64, pool = 1 : i64, pool_kh = 3 : i64, pool_kw = 3 : i64, pool_stride_h = 2 : i64, pool_stride_w = 2 : i64, pool_pad_top = 1 : i64, pool_pad_left = 0 : i64, pool_oh = 5 : i64, pool_ow = 4 : i64}
  return
}

// -----

// Tests that a depthwise/pointwise pair passes its eight buffers (input,
// depthwise weight and bias, pointwise weight, output, bias, residual,
// scratch) in that order, an absent one as 0, then its scalars.
// CHECK: func.func private @tcc_ukabi_dwpw_conv2d(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32, i64, i64, i64, f32, f32) -> i32
// CHECK-LABEL: func @dwpw
// CHECK-SAME: (%[[X:.*]]: memref<1x4x6x6xf32>, %[[DW:.*]]: memref<4x1x3x3xf32>, %[[PW:.*]]: memref<48xf32>, %[[Y:.*]]: memref<1x8x6x6xf32>, %[[S:.*]]: memref<832xi8>)
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: memref.extract_aligned_pointer_as_index %[[DW]]
// CHECK: memref.extract_aligned_pointer_as_index %[[PW]]
// CHECK: memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: call @tcc_ukabi_dwpw_conv2d(%{{[0-9]+}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %{{[0-9]+}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %{{[0-9]+}},
// CHECK-NOT: tcc.ukernel
func.func @dwpw(%x: memref<1x4x6x6xf32>, %dw: memref<4x1x3x3xf32>, %pw: memref<48xf32>, %y: memref<1x8x6x6xf32>, %s: memref<832xi8>) {
  tcc.ukernel "dwpw_conv2d" ins(%x, %dw, %pw : memref<1x4x6x6xf32>, memref<4x1x3x3xf32>, memref<48xf32>) outs(%y, %s : memref<1x8x6x6xf32>, memref<832xi8>) params {n = 1 : i64, c = 4 : i64, h = 6 : i64, w = 6 : i64, kh = 3 : i64, kw = 3 : i64, stride_h = 1 : i64, stride_w = 1 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 1 : i64, pad_left = 1 : i64, pad_bottom = 1 : i64, pad_right = 1 : i64, has_dw_bias = 0 : i64, dw_has_clamp = 1 : i64, dw_clamp_min = 0.0 : f32, dw_clamp_max = 6.0 : f32, f = 8 : i64, flags = 8 : i64, has_bias = 0 : i64, has_residual = 0 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 0.0 : f32}
  return
}

// -----

// Tests that an expansion/depthwise/pointwise block passes its ten buffers
// (input, expansion weight and bias, depthwise weight and bias, pointwise
// weight, output, bias, residual, scratch) in that order, an absent one as
// 0, then its scalars.
// CHECK: func.func private @tcc_ukabi_block_conv2d(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32, i64, i64, i64, f32, f32) -> i32
// CHECK-LABEL: func @block
// CHECK-SAME: (%[[X:.*]]: memref<1x2x6x6xf32>, %[[EW:.*]]: memref<64xf32>, %[[EB:.*]]: memref<4xf32>, %[[DW:.*]]: memref<4x1x3x3xf32>, %[[PW:.*]]: memref<48xf32>, %[[PB:.*]]: memref<8xf32>, %[[Y:.*]]: memref<1x8x6x6xf32>, %[[S:.*]]: memref<832xi8>)
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: memref.extract_aligned_pointer_as_index %[[EW]]
// CHECK: memref.extract_aligned_pointer_as_index %[[EB]]
// CHECK: memref.extract_aligned_pointer_as_index %[[DW]]
// CHECK: memref.extract_aligned_pointer_as_index %[[PW]]
// CHECK: memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: memref.extract_aligned_pointer_as_index %[[PB]]
// CHECK: memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: call @tcc_ukabi_block_conv2d(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %{{[0-9]+}},
// CHECK-NOT: tcc.ukernel
func.func @block(%x: memref<1x2x6x6xf32>, %ew: memref<64xf32>, %eb: memref<4xf32>, %dw: memref<4x1x3x3xf32>, %pw: memref<48xf32>, %pb: memref<8xf32>, %y: memref<1x8x6x6xf32>, %s: memref<832xi8>) {
  tcc.ukernel "block_conv2d" ins(%x, %ew, %eb, %dw, %pw, %pb : memref<1x2x6x6xf32>, memref<64xf32>, memref<4xf32>, memref<4x1x3x3xf32>, memref<48xf32>, memref<8xf32>) outs(%y, %s : memref<1x8x6x6xf32>, memref<832xi8>) params {n = 1 : i64, exp_c = 2 : i64, exp_h = 6 : i64, exp_w = 6 : i64, exp_kh = 1 : i64, exp_kw = 1 : i64, exp_stride_h = 1 : i64, exp_stride_w = 1 : i64, exp_dilation_h = 1 : i64, exp_dilation_w = 1 : i64, exp_pad_top = 0 : i64, exp_pad_left = 0 : i64, exp_pad_bottom = 0 : i64, exp_pad_right = 0 : i64, c = 4 : i64, h = 6 : i64, w = 6 : i64, kh = 3 : i64, kw = 3 : i64, stride_h = 1 : i64, stride_w = 1 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 1 : i64, pad_left = 1 : i64, pad_bottom = 1 : i64, pad_right = 1 : i64, exp_flags = 8 : i64, has_exp_bias = 1 : i64, exp_has_clamp = 1 : i64, exp_clamp_min = 0.0 : f32, exp_clamp_max = 6.0 : f32, has_dw_bias = 0 : i64, dw_has_clamp = 1 : i64, dw_clamp_min = 0.0 : f32, dw_clamp_max = 6.0 : f32, f = 8 : i64, flags = 8 : i64, has_bias = 1 : i64, has_residual = 0 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 0.0 : f32}
  return
}

// -----

// Tests that a max pooling passes its input and output, then its scalars
// (it has no epilogue, so no bias or residual flags).
// CHECK: func.func private @tcc_ukabi_maxpool2d(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i32
// CHECK-LABEL: func @maxpool
// CHECK: call @tcc_ukabi_maxpool2d(
func.func @maxpool(%x: memref<1x4x9x9xf32>, %y: memref<1x4x5x5xf32>) {
  tcc.ukernel "maxpool2d" ins(%x : memref<1x4x9x9xf32>) outs(%y : memref<1x4x5x5xf32>) params {n = 1 : i64, c = 4 : i64, h = 9 : i64, w = 9 : i64, kh = 3 : i64, kw = 3 : i64, stride_h = 2 : i64, stride_w = 2 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 1 : i64, pad_left = 1 : i64, oh = 5 : i64, ow = 5 : i64}
  return
}

// -----

// Tests that an average pooling passes its input and output, the max
// pooling's scalars, then its end pads and count_include_pad.
// CHECK: func.func private @tcc_ukabi_avgpool2d(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i32
// CHECK-LABEL: func @avgpool
// CHECK: arith.constant 5 : i64
// CHECK: arith.constant 5 : i64
// CHECK-NEXT: %[[PB:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[PR:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[INCL:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @tcc_ukabi_avgpool2d({{.*}}, %[[PB]], %[[PR]], %[[INCL]])
func.func @avgpool(%x: memref<1x4x9x9xf32>, %y: memref<1x4x5x5xf32>) {
  tcc.ukernel "avgpool2d" ins(%x : memref<1x4x9x9xf32>) outs(%y : memref<1x4x5x5xf32>) params {n = 1 : i64, c = 4 : i64, h = 9 : i64, w = 9 : i64, kh = 3 : i64, kw = 3 : i64, stride_h = 2 : i64, stride_w = 2 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 1 : i64, pad_left = 1 : i64, oh = 5 : i64, ow = 5 : i64, pad_bottom = 2 : i64, pad_right = 3 : i64, count_include_pad = 1 : i64}
  return
}

// -----

// Tests that attention passes Q, K, V, the mask (a boolean one: its byte
// address), the output and the scratch, then its sizes, strides, the scale
// and fill as floats, the mask's kind and the flags; without a mask, a null
// address in its place.
// CHECK: func.func private @tcc_ukabi_attention(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32, i64, i64) -> i32
// CHECK-LABEL: func @attention
// CHECK: memref.extract_strided_metadata %arg3 : memref<8x8xi1>
// CHECK-NEXT: %[[BYTE:.*]] = arith.constant 1 : index
// CHECK-NEXT: arith.muli %{{.*}}, %[[BYTE]] : index
// CHECK: %[[FILL:.*]] = arith.constant 0xFF800000 : f32
// CHECK: call @tcc_ukabi_attention({{.*}}, %cst, %[[FILL]], %c2_i64, 
// CHECK: call @tcc_ukabi_attention(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %{{[0-9]+}},
func.func @attention(%q: memref<8x4xf32>, %kt: memref<4x8xf32>, %v: memref<8x4xf32>, %m: memref<8x8xi1>, %o: memref<8x4xf32>, %s: memref<1280xi8>) {
  tcc.ukernel "attention" ins(%q, %kt, %v, %m : memref<8x4xf32>, memref<4x8xf32>, memref<8x4xf32>, memref<8x8xi1>) outs(%o, %s : memref<8x4xf32>, memref<1280xi8>) params {batch = 1 : i64, d = 4 : i64, dv = 4 : i64, fill = 0xFF800000 : f32, flags = 0 : i64, ldk = 8 : i64, ldm = 8 : i64, ldo = 4 : i64, ldq = 4 : i64, ldv = 4 : i64, mask_kind = 2 : i64, scale = 1.000000e+00 : f32, sk = 8 : i64, sq = 8 : i64, stride_k = 0 : i64, stride_m = 0 : i64, stride_o = 0 : i64, stride_q = 0 : i64, stride_v = 0 : i64}
  tcc.ukernel "attention" ins(%q, %kt, %v : memref<8x4xf32>, memref<4x8xf32>, memref<8x4xf32>) outs(%o, %s : memref<8x4xf32>, memref<1280xi8>) params {batch = 1 : i64, d = 4 : i64, dv = 4 : i64, fill = 0.0 : f32, flags = 0 : i64, ldk = 8 : i64, ldm = 0 : i64, ldo = 4 : i64, ldq = 4 : i64, ldv = 4 : i64, mask_kind = 0 : i64, scale = 5.000000e-01 : f32, sk = 8 : i64, sq = 8 : i64, stride_k = 0 : i64, stride_m = 0 : i64, stride_o = 0 : i64, stride_q = 0 : i64, stride_v = 0 : i64}
  return
}

// -----

// Tests that a kernel still on tensors is refused.
func.func @unbufferized(%a: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must be bufferized before it becomes a call}}
  %r = tcc.ukernel "sgemm" ins(%a : tensor<4xf32>) outs(%c : tensor<4xf32>) params {has_bias = 0 : i64, has_residual = 0 : i64} -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that a kernel missing one of its parameters is refused, naming it.
func.func @missing_param(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  // expected-error @+1 {{has no parameter 'n'}}
  tcc.ukernel "sgemm" ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>) params {batch = 1 : i64, m = 4 : i64, has_bias = 0 : i64, has_residual = 0 : i64}
  return
}

// -----

// Tests that a depthwise convolution with plane means (has_means) passes
// its outputs' second buffer, the means, as the call's last argument and
// its third, the scratch, as the scratch.
// CHECK-LABEL: func @depthwise_plane_means
// CHECK-SAME: (%[[X:.*]]: memref<1x16x5x5xf32>, %[[W:.*]]: memref<144xf32>, %[[Y:.*]]: memref<1x16x5x5xf32>, %[[M:.*]]: memref<1x16x1x1xf32>, %[[S:.*]]: memref<64xi8>)
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: %[[SA:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: memref.extract_aligned_pointer_as_index %[[M]]
// CHECK: %[[MA:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: call @tcc_ukabi_conv2d(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %[[SA]], {{.*}}, %[[MA]]) :
func.func @depthwise_plane_means(%x: memref<1x16x5x5xf32>, %w: memref<144xf32>, %y: memref<1x16x5x5xf32>, %m: memref<1x16x1x1xf32>, %s: memref<64xi8>) {
  tcc.ukernel "conv2d" ins(%x, %w : memref<1x16x5x5xf32>, memref<144xf32>) outs(%y, %m, %s : memref<1x16x5x5xf32>, memref<1x16x1x1xf32>, memref<64xi8>) params {n = 1 : i64, c = 16 : i64, h = 5 : i64, w = 5 : i64, f = 16 : i64, kh = 3 : i64, kw = 3 : i64, stride_h = 1 : i64, stride_w = 1 : i64, dilation_h = 1 : i64, dilation_w = 1 : i64, pad_top = 1 : i64, pad_left = 1 : i64, pad_bottom = 1 : i64, pad_right = 1 : i64, groups = 16 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 0 : i64, has_clamp = 0 : i64, clamp_min = 0.0 : f32, clamp_max = 0.0 : f32, activation = 0 : i64, has_means = 1 : i64}
  return
}

// -----

// Tests that a transpose passes its input and output, then the batch, rows
// and columns.
// CHECK: func.func private @tcc_ukabi_transpose(i64, i64, i64, i64, i64) -> i32
// CHECK-LABEL: func @transpose
// CHECK-DAG: %[[B:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[R:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[C:.*]] = arith.constant 6 : i64
// CHECK: call @tcc_ukabi_transpose(%{{.*}}, %{{.*}}, %[[B]], %[[R]], %[[C]])
func.func @transpose(%x: memref<2x5x6xf32>, %y: memref<2x6x5xf32>) {
  tcc.ukernel "transpose" ins(%x : memref<2x5x6xf32>) outs(%y : memref<2x6x5xf32>) params {batch = 2 : i64, rows = 5 : i64, cols = 6 : i64}
  return
}
