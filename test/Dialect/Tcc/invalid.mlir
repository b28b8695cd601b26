// RUN: tcc-opt %s -split-input-file -verify-diagnostics

// Tests that operands that do not broadcast are rejected.
func.func @case0(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes 2x3, 4 do not broadcast (dimension 1: 3 vs 4)}}
  %r = tcc.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}
// -----

// Tests that a result whose shape is not the broadcast shape is rejected.
func.func @case1(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result shape 3 does not match the expected shape 2x3}}
  %r = tcc.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}
// -----

// Tests that mixed element types are rejected.
func.func @case2(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  // expected-error @+1 {{failed to verify that all of {lhs, rhs, result} have same element type}}
  %r = tcc.add %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return
}
// -----

// Tests that a float-only op rejects integers.
func.func @case3(%a: tensor<3xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %r = tcc.exp %a : tensor<3xi32>
  return
}
// -----

// Tests that a comparison must give i1.
func.func @case4(%a: tensor<3xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %r = tcc.cmp eq, %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}
// -----

// Tests that a select condition must be i1.
func.func @case5(%c: tensor<3xi8>, %a: tensor<3xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %r = tcc.select %c, %a, %a : (tensor<3xi8>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}
// -----

// Tests that clamp rejects min > max.
func.func @case6(%a: tensor<3xf32>) {
  // expected-error @+1 {{min (2.000000e+00) is greater than max (1.000000e+00)}}
  %r = tcc.clamp %a min = 2.0 max = 1.0 : tensor<3xf32>
  return
}
// -----

// Tests that cast keeps the shape.
func.func @case7(%a: tensor<3xf32>) {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %r = tcc.cast %a : tensor<3xf32> -> tensor<4xi32>
  return
}
// -----

// Tests that a reduction axis must be in range.
func.func @case8(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %r = tcc.reduce_sum %a axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return
}
// -----

// Tests that reduction axes must be sorted and unique.
func.func @case9(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %r = tcc.reduce_max %a axes = [1, 0] : tensor<2x3xf32> -> tensor<f32>
  return
}
// -----

// Tests that a reduction result must drop or keep the reduced axes.
func.func @case10(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape 2x1 does not match the expected shape 2}}
  %r = tcc.reduce_mean %a axes = [1] : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}
// -----

// Tests that argmax needs its axis in range.
func.func @case11(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 3 is out of range for rank 2}}
  %r = tcc.argmax %a axis = 3 : tensor<2x3xf32> -> tensor<2xi64>
  return
}
// -----

// Tests that argmin gives i64 indices.
func.func @case12(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 64-bit signless integer values}}
  %r = tcc.argmin %a axis = 1 : tensor<2x3xf32> -> tensor<2xi32>
  return
}
// -----

// Tests that argmax result drops the axis unless keepdims.
func.func @case13(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape 3 does not match the expected shape 2}}
  %r = tcc.argmax %a axis = 1 : tensor<2x3xf32> -> tensor<3xi64>
  return
}
// -----

// Tests that matmul contraction sizes must agree.
func.func @case14(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{matmul contraction sizes differ: 2x3 * 4x5 (3 vs 4)}}
  %r = tcc.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}
// -----

// Tests that matmul operands need rank >= 1.
func.func @case15(%a: tensor<f32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{matmul operands must have rank >= 1}}
  %r = tcc.matmul %a, %b : (tensor<f32>, tensor<4x5xf32>) -> tensor<5xf32>
  return
}
// -----

// Tests that matmul batch dimensions must broadcast.
func.func @case16(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{matmul batch dimensions: shapes 2, 3 do not broadcast}}
  %r = tcc.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return
}
// -----

// Tests that matmul result shape follows numpy.
func.func @case17(%a: tensor<3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{result shape 3x1 does not match the expected shape 3}}
  %r = tcc.matmul %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x1xf32>
  return
}
// -----

// Tests that conv input and weight share a rank >= 3.
func.func @case18(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{convolution needs input and weight of the same rank >= 3; got 1x3x8x8 and 4x3x3}}
  %r = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that conv attribute lists match the spatial rank.
func.func @case19(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{convolution over 2 spatial dimensions needs 2 strides, 2 dilations and 4 pads; got 1, 2 and 4}}
  %r = tcc.conv %x, %w strides = [1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that conv strides are positive.
func.func @case20(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{convolution strides and dilations must be >= 1}}
  %r = tcc.conv %x, %w strides = [0, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that conv pads are non-negative.
func.func @case21(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{convolution pads must be >= 0}}
  %r = tcc.conv %x, %w strides = [1, 1] padding = [0, -1, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that conv groups are positive.
func.func @case22(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{convolution groups must be >= 1; got 0}}
  %r = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 0 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that conv filters divide into groups.
func.func @case23(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{convolution filters (3) are not divisible by groups (2)}}
  %r = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 2 : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}
// -----

// Tests that conv channels match the weight.
func.func @case24(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{convolution input has 3 channels but weight 4x2x3x3 with 1 group(s) expects 2}}
  %r = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that conv window fits the padded input.
func.func @case25(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{convolution window (3) is larger than padded spatial dimension 0 (2)}}
  %r = tcc.conv %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}
// -----

// Tests that conv bias has one entry per filter.
func.func @case26(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{bias shape 3 does not match the 4 filters}}
  %r = tcc.conv %x, %w, %b strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that conv result shape follows the window arithmetic.
func.func @case27(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{result shape 1x4x6x6 does not match the expected shape 1x4x3x3}}
  %r = tcc.conv %x, %w strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

// Tests that pooling needs rank >= 3.
func.func @case28(%x: tensor<3x8xf32>) {
  // expected-error @+1 {{pooling needs an input of rank >= 3; got 3x8}}
  %r = tcc.max_pool %x kernel = [2] strides = [1] padding = [0, 0] dilations = [1] : tensor<3x8xf32> -> tensor<3x7xf32>
  return
}
// -----

// Tests that pooling has one kernel size per spatial dimension.
func.func @case29(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{pooling over 2 spatial dimensions needs 2 kernel sizes; got 1}}
  %r = tcc.max_pool %x kernel = [2] strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  return
}
// -----

// Tests that pooling kernel sizes are positive.
func.func @case30(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{pooling kernel sizes must be >= 1}}
  %r = tcc.avg_pool %x kernel = [0, 2] strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  return
}
// -----

// Tests that pooling attribute lists match the spatial rank.
func.func @case31(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{pooling over 2 spatial dimensions needs 2 strides, 2 dilations and 4 pads; got 2, 2 and 2}}
  %r = tcc.avg_pool %x kernel = [2, 2] strides = [1, 1] padding = [0, 0] dilations = [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  return
}
// -----

// Tests that pooling window fits the padded input.
func.func @case32(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{pooling window (3) is larger than padded spatial dimension 0}}
  %r = tcc.max_pool %x kernel = [3, 3] strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x3x2x2xf32> -> tensor<1x3x1x1xf32>
  return
}
// -----

// Tests that pooling result shape follows the window arithmetic.
func.func @case33(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{result shape 1x3x5x5 does not match the expected shape 1x3x4x4}}
  %r = tcc.max_pool %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  return
}
// -----

// Tests that softmax axis must be in range.
func.func @case34(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %r = tcc.softmax %x axis = 2 : tensor<2x3xf32>
  return
}
// -----

// Tests that layer_norm axis must be in range.
func.func @case35(%x: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %r = tcc.layer_norm %x, %g axis = 2 epsilon = 1.0e-5 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}
// -----

// Tests that layer_norm parameters broadcast to the normalized shape.
func.func @case36(%x: tensor<2x3xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{parameter shape 2 does not broadcast to the normalized shape 3}}
  %r = tcc.layer_norm %x, %g axis = 1 epsilon = 1.0e-5 : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}
// -----

// Tests that layer_norm epsilon is non-negative.
func.func @case37(%x: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{epsilon must be >= 0}}
  %r = tcc.layer_norm %x, %g axis = 1 epsilon = -1.0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}
// -----

// Tests that layer_norm keeps the input shape.
func.func @case38(%x: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{result shape 3x2 does not match the expected shape 2x3}}
  %r = tcc.layer_norm %x, %g axis = 1 epsilon = 1.0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  return
}
// -----

// Tests that batch_norm needs rank >= 2.
func.func @case39(%x: tensor<3xf32>, %p: tensor<3xf32>) {
  // expected-error @+1 {{input must have rank >= 2 (N x C x ...); got 3}}
  %r = tcc.batch_norm %x, %p, %p, %p, %p epsilon = 1.0e-5 : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}
// -----

// Tests that batch_norm parameters are channel vectors.
func.func @case40(%x: tensor<1x3x4xf32>, %p: tensor<3xf32>, %q: tensor<4xf32>) {
  // expected-error @+1 {{parameter shape 4 does not match the 3 channels of input 1x3x4}}
  %r = tcc.batch_norm %x, %p, %p, %q, %p epsilon = 1.0e-5 : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x3x4xf32>
  return
}
// -----

// Tests that batch_norm epsilon is non-negative.
func.func @case41(%x: tensor<1x3x4xf32>, %p: tensor<3xf32>) {
  // expected-error @+1 {{epsilon must be >= 0}}
  %r = tcc.batch_norm %x, %p, %p, %p, %p epsilon = -1.0e-5 : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4xf32>
  return
}
// -----

// Tests that reshape keeps the element count.
func.func @case42(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape 6 elements (2x3) into 7 (7)}}
  %r = tcc.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return
}
// -----

// Tests that transpose needs one perm entry per dimension.
func.func @case43(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation has 1 entries for a tensor of rank 2}}
  %r = tcc.transpose %x perm = [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
// -----

// Tests that transpose needs a permutation.
func.func @case44(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm is not a permutation of [0, 2)}}
  %r = tcc.transpose %x perm = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}
// -----

// Tests that transpose permutes the shape.
func.func @case45(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape 2x3 does not match the expected shape 3x2}}
  %r = tcc.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
// -----

// Tests that broadcast_to needs a compatible shape.
func.func @case46(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{input shape 2x3 does not broadcast to 2x4}}
  %r = tcc.broadcast_to %x : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}
// -----

// Tests that concat inputs share the element type.
func.func @case47(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{input element type 'i32' differs from the result's 'f32'}}
  %r = tcc.concat %a, %b axis = 0 : (tensor<2xf32>, tensor<2xi32>) -> tensor<4xf32>
  return
}
// -----

// Tests that concat inputs share the rank.
func.func @case48(%a: tensor<2xf32>, %b: tensor<2x1xf32>) {
  // expected-error @+1 {{concat inputs differ in rank: 2 and 2x1}}
  %r = tcc.concat %a, %b axis = 0 : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<4xf32>
  return
}
// -----

// Tests that concat inputs agree off the axis.
func.func @case49(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{concat inputs 2x3 and 2x4 differ in dimension 1}}
  %r = tcc.concat %a, %b axis = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}
// -----

// Tests that concat axis must be in range.
func.func @case50(%a: tensor<2xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %r = tcc.concat %a, %a axis = 1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}
// -----

// Tests that concat result adds up the axis.
func.func @case51(%a: tensor<2xf32>) {
  // expected-error @+1 {{result shape 5 does not match the expected shape 4}}
  %r = tcc.concat %a, %a axis = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<5xf32>
  return
}
// -----

// Tests that slice has one offset and step per dimension.
func.func @case52(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{needs one offset and one step per dimension of the rank-2 input and a result of the same rank}}
  %r = tcc.slice %x offsets = [0] steps = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
// -----

// Tests that slice steps are non-zero.
func.func @case53(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{step of dimension 1 is zero}}
  %r = tcc.slice %x offsets = [0, 0] steps = [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
// -----

// Tests that slice stays inside the input.
func.func @case54(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 1 reads indices 6 to 8, outside [0, 8)}}
  %r = tcc.slice %x offsets = [0, 6] steps = [1, 2] : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}
// -----

// Tests that split axis must be in range.
func.func @case55(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %r = tcc.split %x axis = 2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
// -----

// Tests that split pieces keep the other dimensions.
func.func @case56(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 3x4 does not match the expected shape 4x4}}
  %r:2 = tcc.split %x axis = 1 : tensor<4x8xf32> -> tensor<3x4xf32>, tensor<4x4xf32>
  return
}
// -----

// Tests that split pieces add up to the input.
func.func @case57(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{pieces add up to 7 along axis 1 but the input has 8}}
  %r:2 = tcc.split %x axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x3xf32>
  return
}
// -----

// Tests that split pieces keep the element type.
func.func @case58(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result element types must match the input's}}
  %r:2 = tcc.split %x axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xi32>
  return
}
// -----

// Tests that split needs at least one piece.
func.func @case59(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{needs at least one result}}
  "tcc.split"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> ()
  return
}
// -----

// Tests that gather axis must be in range.
func.func @case60(%x: tensor<4x8xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %r = tcc.gather %x, %i axis = 2 : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  return
}
// -----

// Tests that gather indices are i32 or i64.
func.func @case61(%x: tensor<4x8xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %r = tcc.gather %x, %i axis = 0 : (tensor<4x8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  return
}
// -----

// Tests that gather result shape follows ONNX.
func.func @case62(%x: tensor<4x8xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{result shape 4x6 does not match the expected shape 4x2x3}}
  %r = tcc.gather %x, %i axis = 1 : (tensor<4x8xf32>, tensor<2x3xi64>) -> tensor<4x6xf32>
  return
}
// -----

// Tests that pad has low and high pads per dimension.
func.func @case63(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{pad needs 2 low and high pads for rank 2; got 1 and 2}}
  %r = tcc.pad %x low = [1] high = [1, 1] mode = constant : tensor<4x8xf32> -> tensor<6x10xf32>
  return
}
// -----

// Tests that pads are non-negative.
func.func @case64(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{pads must be >= 0}}
  %r = tcc.pad %x low = [-1, 0] high = [1, 1] mode = edge : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}
// -----

// Tests that pad result shape adds the pads.
func.func @case65(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 6x10 does not match the expected shape 6x9}}
  %r = tcc.pad %x low = [1, 0] high = [1, 1] mode = edge : tensor<4x8xf32> -> tensor<6x10xf32>
  return
}
// -----

// Tests that a constant's result type matches its value.
func.func @constant_type() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %r = "tcc.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

// Tests that a fused body takes one argument per input, of the same type.
func.func @fused_args(%a: tensor<4xf32>) {
  // expected-error @+1 {{body arguments must match the inputs in number and type}}
  %r = tcc.fused "elementwise" (%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    tcc.yield %x : tensor<4xf32>
  }
  return
}

// -----

// Tests that a fused body yields the result types.
func.func @fused_yield(%a: tensor<4xf32>) {
  // expected-error @+1 {{yielded types must match the result types}}
  %r = tcc.fused "elementwise" (%a : tensor<4xf32>) -> tensor<2xf32> {
  ^bb0(%x: tensor<4xf32>):
    tcc.yield %x : tensor<4xf32>
  }
  return
}

// -----

// Tests that a fused body ends with tcc.yield.
func.func @fused_terminator(%a: tensor<4xf32>) {
  // expected-error @+1 {{body must end with tcc.yield}}
  %r = tcc.fused "elementwise" (%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    llvm.unreachable
  }
  return
}

// -----

// Tests that tcc.yield lives only in a fused body.
func.func @yield_outside(%a: tensor<4xf32>) {
  // expected-error @+1 {{expects parent op to be one of 'tcc.fused, tcc.if, tcc.loop'}}
  tcc.yield %a : tensor<4xf32>
}

// -----

// Tests that a micro-kernel call does not mix tensors and memrefs.
func.func @ukernel_mixed(%a: tensor<4xf32>, %c: memref<4xf32>) {
  // expected-error @+1 {{operands must be all tensors or all memrefs}}
  tcc.ukernel "sgemm" ins(%a : tensor<4xf32>) outs(%c : memref<4xf32>) params {}
  return
}

// -----

// Tests that a call on memrefs returns nothing.
func.func @ukernel_memref_results(%a: memref<4xf32>, %c: memref<4xf32>) {
  // expected-error @+1 {{on memrefs has no results}}
  %r = "tcc.ukernel"(%a, %c) <{name = "sgemm", params = {}, operandSegmentSizes = array<i32: 1, 1>}> : (memref<4xf32>, memref<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that a call on tensors returns one value per output.
func.func @ukernel_tensor_results(%a: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{on tensors returns one value per output, of the same type}}
  %r = tcc.ukernel "sgemm" ins(%a : tensor<4xf32>) outs(%c : tensor<4xf32>) params {} -> tensor<2xf32>
  return
}

// -----

// Tests that a bit cast keeps the bit width.
func.func @bitcast_width(%a: tensor<4xf32>) {
  // expected-error @+1 {{cannot reinterpret 32-bit 'f32' as 16-bit 'i16'}}
  %r = tcc.bitcast %a : tensor<4xf32> -> tensor<4xi16>
  return
}

// -----

// Tests that a cumulative op's axis lies in the input.
func.func @cumsum_axis(%a: tensor<4xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %r = tcc.cumsum %a axis = 1 : tensor<4xf32>
  return
}

// -----

// Tests that top-k's axis lies in the input.
func.func @topk_axis(%a: tensor<4xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 1}}
  %v, %i = tcc.topk %a axis = 2 largest : tensor<4xf32> -> tensor<2xf32>, tensor<2xi64>
  return
}

// -----

// Tests that top-k's values and indices have one shape.
func.func @topk_shapes(%a: tensor<4xf32>) {
  // expected-error @+1 {{values 2 and indices 3 differ in shape}}
  %v, %i = tcc.topk %a axis = 0 largest : tensor<4xf32> -> tensor<2xf32>, tensor<3xi64>
  return
}

// -----

// Tests that top-k's results differ from the input only along the axis.
func.func @topk_result(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{result shape 3x2 does not match the expected shape 2x2}}
  %v, %i = tcc.topk %a axis = 1 : tensor<2x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
  return
}

// -----

// Tests that k cannot exceed the axis' length.
func.func @topk_k(%a: tensor<4xf32>) {
  // expected-error @+1 {{k = 5 exceeds the 4 elements along axis 0}}
  %v, %i = tcc.topk %a axis = 0 : tensor<4xf32> -> tensor<5xf32>, tensor<5xi64>
  return
}

// -----

// Tests that scatter's axis lies in the data.
func.func @scatter_axis(%d: tensor<3xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %r = tcc.scatter %d, %i, %u axis = 1 reduction = none : (tensor<3xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<3xf32>
  return
}

// -----

// Tests that scatter's indices and updates have one shape.
func.func @scatter_shapes(%d: tensor<3xf32>, %i: tensor<2xi64>, %u: tensor<1xf32>) {
  // expected-error @+1 {{indices 2 and updates 1 differ in shape}}
  %r = tcc.scatter %d, %i, %u axis = 0 reduction = none : (tensor<3xf32>, tensor<2xi64>, tensor<1xf32>) -> tensor<3xf32>
  return
}

// -----

// Tests that scatter's indices have the data's rank.
func.func @scatter_rank(%d: tensor<3x3xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{indices must have the rank of data (2); got 2}}
  %r = tcc.scatter %d, %i, %u axis = 0 reduction = none : (tensor<3x3xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<3x3xf32>
  return
}

// -----

// Tests that updates fit the data outside the scatter axis.
func.func @scatter_fit(%d: tensor<3x2xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{updates 2x3 exceed data 3x2 in dimension 1}}
  %r = tcc.scatter %d, %i, %u axis = 0 reduction = none : (tensor<3x2xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

// Tests that an if's condition holds one element.
func.func @if_condition(%c: tensor<2xi1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{condition must hold one element; it has 2}}
  %r = tcc.if %c : tensor<2xi1> -> tensor<2xf32> {
    tcc.yield %a : tensor<2xf32>
  } else {
    tcc.yield %a : tensor<2xf32>
  }
  return
}

// -----

// Tests that both branches yield the results' types.
func.func @if_types(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{the else region yields types other than the results'}}
  %r = tcc.if %c : tensor<i1> -> tensor<2xf32> {
    tcc.yield %a : tensor<2xf32>
  } else {
    tcc.yield %b : tensor<3xf32>
  }
  return
}

// -----

// Tests that a loop's condition holds one element.
func.func @loop_condition(%n: tensor<i64>, %c: tensor<2xi1>) {
  // expected-error @+1 {{condition must hold one element; it has 2}}
  tcc.loop %n, %c : (tensor<i64>, tensor<2xi1>) -> () {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>):
    tcc.yield %go : tensor<i1>
  }
  return
}

// -----

// Tests that a loop's trip count holds one element.
func.func @loop_trip_count(%n: tensor<2xi64>, %c: tensor<i1>) {
  // expected-error @+1 {{trip count must hold one element}}
  tcc.loop %n, %c : (tensor<2xi64>, tensor<i1>) -> () {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>):
    tcc.yield %go : tensor<i1>
  }
  return
}

// -----

// Tests that the body takes the iteration number, condition and carried values.
func.func @loop_args(%n: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{body arguments must be the iteration number (tensor<i64>), the condition (tensor<i1>) and the carried values}}
  %r = tcc.loop %n, %c, %a : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>):
    tcc.yield %go, %a : tensor<i1>, tensor<2xf32>
  }
  return
}

// -----

// Tests that the first results are the carried values.
func.func @loop_results(%n: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{the first results must have the types of the carried values}}
  %r = tcc.loop %n, %c, %a : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %x: tensor<2xf32>):
    tcc.yield %go, %x : tensor<i1>, tensor<2xf32>
  }
  return
}

// -----

// Tests that the body yields the condition, the carried values and the scans.
func.func @loop_yield(%n: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{body must yield the condition (tensor<i1>), the carried values and one value per scan output}}
  %r = tcc.loop %n, %c, %a : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %x: tensor<2xf32>):
    tcc.yield %x : tensor<2xf32>
  }
  return
}

// -----

// Tests that a scan output stacks the yielded values along a static leading
// dimension.
func.func @loop_scan(%n: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{scan output 0 of type 'tensor<3x4xf32>' must stack 'tensor<2xf32>' along a new leading dimension of static size}}
  %r:2 = tcc.loop %n, %c, %a : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x4xf32>) {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %x: tensor<2xf32>):
    tcc.yield %go, %x, %x : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return
}
// -----

// Tests that nll_loss needs a target of the input's positions.
func.func @nll_target(%x: tensor<4x3xf32>, %t: tensor<5xi64>) {
  // expected-error @+1 {{input 4x3 and target 5 must be N x C x d... and N x d...}}
  %r = tcc.nll_loss %x, %t reduction = sum : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<f32>
  return
}
// -----

// Tests that nll_loss needs one weight per class.
func.func @nll_weight(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>) {
  // expected-error @+1 {{weight 4 must hold one value per class (3)}}
  %r = tcc.nll_loss %x, %t, %w reduction = sum : (tensor<4x3xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<f32>
  return
}
// -----

// Tests that a reduced nll_loss is a scalar.
func.func @nll_result(%x: tensor<4x3xf32>, %t: tensor<4xi64>) {
  // expected-error @+1 {{result shape 4 does not match the expected shape scalar}}
  %r = tcc.nll_loss %x, %t reduction = mean : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

// Tests that positions run along one dimension of the result.
func.func @iota_dimension() {
  // expected-error @+1 {{dimension 2 is out of range for rank 2}}
  %r = tcc.iota {dimension = 2 : i64} : tensor<4x1xi64>
  return
}

// -----

// Tests that the other dimensions of positions are 1.
func.func @iota_other_dimensions() {
  // expected-error @+1 {{dimension 1 must be 1 (the positions run along dimension 0 only); got 4x3}}
  %r = tcc.iota {dimension = 0 : i64} : tensor<4x3xi64>
  return
}

// -----

// Tests that positions are numbers.
func.func @iota_bool() {
  // expected-error @+1 {{must be ranked tensor of}}
  %r = tcc.iota {dimension = 0 : i64} : tensor<4xi1>
  return
}

// -----

// Tests that a trim keeps every dimension but the trimmed one, made
// dynamic.
func.func @trim_static(%x: tensor<2x6xi64>, %n: tensor<i64>) {
  // expected-error @+1 {{result 2x4 must be the input's 2x6 with dimension 1 dynamic}}
  %r = tcc.trim %x, %n {dimension = 1 : i64, name = "y"} : (tensor<2x6xi64>, tensor<i64>) -> tensor<2x4xi64>
  return
}

// -----

// Tests that a trimmed dimension is static in the input (its upper bound);
// others may be trimmed already.
func.func @trim_bound(%x: tensor<?x6xi64>, %n: tensor<i64>) {
  %ok = tcc.trim %x, %n {dimension = 1 : i64, name = "y"} : (tensor<?x6xi64>, tensor<i64>) -> tensor<?x?xi64>
  // expected-error @+1 {{input must have a static size in dimension 0 (the upper bound)}}
  %r = tcc.trim %x, %n {dimension = 0 : i64, name = "z"} : (tensor<?x6xi64>, tensor<i64>) -> tensor<?x6xi64>
  return
}

// -----

// Tests that a trim's size is one int64.
func.func @trim_size(%x: tensor<6xf32>, %n: tensor<1xi64>) {
  // expected-error @+1 {{size must be a tensor<i64> of rank 0}}
  %r = tcc.trim %x, %n {dimension = 0 : i64, name = "y"} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32>
  return
}
