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
  // expected-error @+1 {{'tcc.add' combines tensors with 2 rows a batch row and 1 rows a batch row}}
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

// expected-error @+1 {{dimension 1 of input 0 ('tensor<4x?xf32>') is dynamic; tcc compiles one dynamic leading (batch) dimension}}
func.func @main(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = tcc.relu %x : tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// Inside the graph the batch may move, but the outputs run as slabs of rows.
// expected-error @+1 {{dimension 1 of output 0 ('tensor<4x?xf32>') is dynamic}}
func.func @main(%x: tensor<?x4xf32>) -> tensor<4x?xf32> {
  %0 = tcc.transpose %x perm = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tensor<?x?xf32>' has several dynamic dimensions; tcc compiles one dynamic dimension}}
  %0 = tcc.broadcast_to %x : tensor<?x4xf32> -> tensor<?x?xf32>
  %1 = tcc.slice %0 offsets = [0, 0] steps = [1, 1] : tensor<?x?xf32> -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// Once moved, the rules follow the batch: a softmax over the dimension that
// now holds it mixes rows.
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tcc.transpose %x perm = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  // expected-error @+1 {{'tcc.softmax' works along the dynamic dimension}}
  %1 = tcc.softmax %0 axis = 1 : tensor<4x?xf32>
  %2 = tcc.transpose %1 perm = [1, 0] : tensor<4x?xf32> -> tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// A batched matrix that is not leading: contracting over it mixes rows.
func.func @main(%x: tensor<?x4xf32>, %w: tensor<3x4xf32>) -> tensor<?x3xf32> {
  %0 = tcc.transpose %x perm = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  // expected-error @+1 {{'tcc.matmul' reduces over the dynamic dimension}}
  %1 = tcc.matmul %0, %x : (tensor<4x?xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
  %2 = tcc.matmul %x, %1 : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %3 = tcc.slice %2 offsets = [0, 0] steps = [1, 1] : tensor<?x4xf32> -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}

// -----

// [S, B, D] -> [S*B, D] holds S blocks of the batch: it does not split
// back as [B, S, D].
func.func @main(%x: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %0 = tcc.transpose %x perm = [1, 0, 2] : tensor<?x2x4xf32> -> tensor<2x?x4xf32>
  %1 = tcc.reshape %0 : tensor<2x?x4xf32> -> tensor<?x4xf32>
  // expected-error @+1 {{'tcc.reshape' reshapes across the dynamic dimension}}
  %2 = tcc.reshape %1 : tensor<?x4xf32> -> tensor<?x2x4xf32>
  return %2 : tensor<?x2x4xf32>
}

// -----

// S blocks of the batch are no output.
func.func @main(%x: tensor<?x2x4xf32>) -> tensor<?x4xf32> {
  %0 = tcc.transpose %x perm = [1, 0, 2] : tensor<?x2x4xf32> -> tensor<2x?x4xf32>
  %1 = tcc.reshape %0 : tensor<2x?x4xf32> -> tensor<?x4xf32>
  // expected-error @+1 {{'func.return' returns 2 blocks of 1 rows a batch row}}
  return %1 : tensor<?x4xf32>
}
