// RUN: tcc-opt %s --split-input-file --verify-diagnostics --tcc-specialize-batch

// Ops that mix the rows of the batch, and dynamic dimensions that are not
// leading, are errors naming the op.
func.func @main(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tcc.reduce_sum' reduces over the dynamic dimension, so the batch cannot vary}}
  %0 = tcc.reduce_sum %x axes = [0] : tensor<?x4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tcc.softmax' works along the dynamic dimension}}
  %0 = tcc.softmax %x axis = 0 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @main(%x: tensor<?x6xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tcc.reshape' reshapes across the dynamic dimension}}
  %0 = tcc.reshape %x : tensor<?x6xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Two rows a batch row: an output's leading dimension must be the batch.
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %0 = tcc.reshape %x : tensor<?x4xf32> -> tensor<?x2xf32>
  // expected-error @+1 {{'func.return' returns 2 rows a batch row}}
  return %0 : tensor<?x2xf32>
}

// -----

// Tensors of different multiples of the batch do not combine.
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %0 = tcc.reshape %x : tensor<?x4xf32> -> tensor<?x2xf32>
  %1 = tcc.slice %x offsets = [0, 0] steps = [1, 1] : tensor<?x4xf32> -> tensor<?x2xf32>
  // expected-error @+1 {{'tcc.add' combines tensors with 2 and 1 rows a batch row}}
  %2 = tcc.add %0, %1 : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  return %2 : tensor<?x2xf32>
}

// -----

func.func @main(%x: tensor<?x4xf32>, %y: tensor<3x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tcc.concat' joins batched and unbatched tensors}}
  %0 = tcc.concat %x, %y axis = 0 : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @main(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{dimension 1 of 'tensor<4x?xf32>' is dynamic; tcc compiles one dynamic leading (batch) dimension}}
  %0 = tcc.relu %x : tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// expected-error @+1 {{inputs name their dynamic leading dimensions 'a' and 'b'}}
func.func @main(%x: tensor<?x4xf32> {tcc.dims = ["a", ""]}, %y: tensor<?x4xf32> {tcc.dims = ["b", ""]}) -> tensor<?x4xf32> {
  %0 = tcc.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

module attributes {tcc.dim_bounds = {seq = array<i64: 1, 8>}} {
  // expected-error @+1 {{--dim seq names no dynamic dimension of the model (it has 'batch')}}
  func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = tcc.relu %x : tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}
