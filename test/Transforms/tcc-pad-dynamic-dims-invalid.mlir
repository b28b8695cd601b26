// RUN: tcc-opt %s --split-input-file --verify-diagnostics --tcc-pad-dynamic-dims

// Ops that would read padding into valid elements in a way no mask undoes
// are errors naming the op; so are a padded dimension without an upper
// bound and two dynamic dimensions.
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<1x?x4xf32> {tcc.dims = ["", "seq", ""]}) -> tensor<1x?x4xf32> {
    // expected-error @+1 {{'tcc.concat' concatenates along the dynamic dimension, so the dimension cannot be padded to a bucket}}
    %0 = tcc.concat %x, %x axis = 1 : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x4xf32>
    return %0 : tensor<1x?x4xf32>
  }
}

// -----

module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<1x?xf32> {tcc.dims = ["", "seq"]}, %s: tensor<1xf32>, %b: tensor<1xf32>) -> tensor<1x?xf32> {
    // expected-error @+1 {{'tcc.layer_norm' normalizes over the dynamic dimension}}
    %0 = tcc.layer_norm %x, %s, %b axis = 0 epsilon = 1.0e-05 : (tensor<1x?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?xf32>
    return %0 : tensor<1x?xf32>
  }
}

// -----

module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<2x?xf32> {tcc.dims = ["", "seq"]}) -> tensor<?xf32> {
    // expected-error @+1 {{'tcc.reshape' reshapes across the dynamic dimension}}
    %0 = tcc.reshape %x : tensor<2x?xf32> -> tensor<?x2xf32>
    %1 = tcc.reduce_sum %0 axes = [1] : tensor<?x2xf32> -> tensor<?xf32>
    return %1 : tensor<?xf32>
  }
}

// -----

module attributes {tcc.dim_bounds = {seq = array<i64: 2, 64>}} {
  func.func @main(%x: tensor<1x?x4xf32> {tcc.dims = ["", "seq", ""]}) -> tensor<1x3x4xf32> {
    // expected-error @+1 {{'tcc.slice' slices the dynamic dimension beyond its smallest size (2)}}
    %0 = tcc.slice %x offsets = [0, 0, 0] steps = [1, 1, 1] : tensor<1x?x4xf32> -> tensor<1x3x4xf32>
    return %0 : tensor<1x3x4xf32>
  }
}

// -----

module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<1x?x4xf32> {tcc.dims = ["", "seq", ""]}, %w: tensor<4x4xf32>) -> tensor<1x?x4xf32> {
    // expected-error @+1 {{'tcc.add' combines the dynamic dimension with a fixed size 4}}
    %0 = tcc.add %x, %w : (tensor<1x?x4xf32>, tensor<4x4xf32>) -> tensor<1x?x4xf32>
    return %0 : tensor<1x?x4xf32>
  }
}

// -----

module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<2x?xf32> {tcc.dims = ["", "seq"]}) -> tensor<?xf32> {
    %0 = tcc.reshape %x : tensor<2x?xf32> -> tensor<?xf32>
    // expected-error @+1 {{'func.return' returns output 0 with the dynamic dimension merged into another}}
    return %0 : tensor<?xf32>
  }
}

// -----

// expected-error @+1 {{dynamic dimension 'seq' is padded to fixed buckets and needs an upper bound of at most 65536: give --dim seq=1..MAX}}
func.func @main(%x: tensor<1x?xf32> {tcc.dims = ["", "seq"]}) -> tensor<1xf32> {
  %0 = tcc.reduce_sum %x axes = [1] : tensor<1x?xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// expected-error @+1 {{the inputs have dynamic dimensions 'seq' and 'len'; tcc compiles a batch and one other dynamic dimension}}
func.func @main(%x: tensor<1x?x?xf32> {tcc.dims = ["", "seq", "len"]}) -> tensor<1xf32> {
  %0 = tcc.reduce_sum %x axes = [1, 2] : tensor<1x?x?xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// Beside a batch, the two may share a dimension inside the graph, not in
// an output.
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<?x?x4xf32> {tcc.dims = ["batch", "seq", ""]}) -> tensor<?x4xf32> {
    %0 = tcc.reshape %x : tensor<?x?x4xf32> -> tensor<?x4xf32>
    // expected-error @+1 {{'func.return' returns output 0 with the dynamic dimension merged into another (outputs must hold it as a dimension of its own)}}
    return %0 : tensor<?x4xf32>
  }
}

// -----

module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<0x?xf32> {tcc.dims = ["", "seq"]}) -> tensor<0x?xf32> {
    // expected-error @+1 {{'tcc.reshape' reshapes a tensor too large or empty to follow the dynamic dimension through}}
    %0 = tcc.reshape %x : tensor<0x?xf32> -> tensor<?x0xf32>
    %1 = tcc.reshape %0 : tensor<?x0xf32> -> tensor<0x?xf32>
    return %1 : tensor<0x?xf32>
  }
}

// -----

// A fixed dimension cut to the dynamic size must hold the largest bucket.
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<?x?xf32> {tcc.dims = ["seq", "seq"]}) -> tensor<?x?xf32> {
    %m = tcc.constant dense<1.0> : tensor<32x32xf32>
    // expected-error @+1 {{'tcc.slice' slices the dynamic dimension's 64 elements from a dimension of 32 (bound the dimension by 32)}}
    %s = tcc.slice %m offsets = [0, 0] steps = [1, 1] : tensor<32x32xf32> -> tensor<?x?xf32>
    %0 = tcc.mul %x, %s : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
}

// -----

// Positions along a batch (a dynamic dimension no op mixes, beside the
// sequence) have no bucket.
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<?x?xf32> {tcc.dims = ["batch", "seq"]}) -> tensor<?x?xf32> {
    %b = tcc.reduce_sum %x axes = [1] keepdims : tensor<?x?xf32> -> tensor<?x1xf32>
    %f = tcc.cast %b : tensor<?x1xf32> -> tensor<?x1xi64>
    // expected-error @+1 {{'tcc.iota' ranges over the batch}}
    %i = tcc.iota {dimension = 0 : i64} : tensor<?x1xi64>
    %a = tcc.add %f, %i : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi64>
    %y = tcc.cast %a : tensor<?x1xi64> -> tensor<?x1xf32>
    %0 = tcc.mul %x, %y : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
}

// -----

// Two sizes the graph computes under one name are refused (the name is
// the symbol's).
module {
  func.func @main(%x: tensor<6xf32>, %m: tensor<i64>, %n: tensor<i64>) -> (tensor<?xf32>, tensor<?xf32>) {
    %a = tcc.relu %x : tensor<6xf32>
    %b = tcc.neg %x : tensor<6xf32>
    %t = tcc.trim %a, %m {dimension = 0 : i64, name = "a"} : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>
    // expected-error @+1 {{'tcc.trim' names another size known only at run time 'a' too}}
    %u = tcc.trim %b, %n {dimension = 0 : i64, name = "a"} : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>
    return %t, %u : tensor<?xf32>, tensor<?xf32>
  }
}

// -----

// One size at two bounds is refused.
module {
  func.func @main(%x: tensor<6xf32>, %y: tensor<8xf32>, %m: tensor<i64>) -> (tensor<?xf32>, tensor<?xf32>) {
    %t = tcc.trim %x, %m {dimension = 0 : i64, name = "a"} : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>
    // expected-error @+1 {{'tcc.trim' trims to the size of 'a' at another bound or name}}
    %u = tcc.trim %y, %m {dimension = 0 : i64, name = "a"} : (tensor<8xf32>, tensor<i64>) -> tensor<?xf32>
    return %t, %u : tensor<?xf32>, tensor<?xf32>
  }
}

// -----

// A size the graph computes beside dynamic input dimensions is refused.
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 64>}} {
  func.func @main(%x: tensor<?x4xf32> {tcc.dims = ["seq", ""]}, %v: tensor<6xf32>, %n: tensor<i64>) -> (tensor<?x4xf32>, tensor<?xf32>) {
    // expected-error @+1 {{'tcc.trim' makes a size known only at run time in a graph with dynamic dimensions; tcc compiles one or the other}}
    %t = tcc.trim %v, %n {dimension = 0 : i64, name = "y"} : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>
    return %x, %t : tensor<?x4xf32>, tensor<?xf32>
  }
}

// -----

// The value a trim cuts must have no other use (past the trim it stands
// for the trimmed one).
module {
  func.func @main(%v: tensor<6xf32>, %n: tensor<i64>) -> (tensor<?xf32>, tensor<6xf32>) {
    %r = tcc.relu %v : tensor<6xf32>
    // expected-error @+1 {{'tcc.trim' trims a value used otherwise}}
    %t = tcc.trim %r, %n {dimension = 0 : i64, name = "y"} : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>
    %u = tcc.neg %r : tensor<6xf32>
    return %t, %u : tensor<?xf32>, tensor<6xf32>
  }
}

// -----

// A fixed dimension cut to the dynamic size from an offset is refused.
module attributes {tcc.dim_bounds = {seq = array<i64: 1, 8>}} {
  func.func @main(%x: tensor<?xf32> {tcc.dims = ["seq"]}, %m: tensor<32xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{'tcc.slice' slices dimension 0 to the dynamic size from an offset or in steps}}
    %s = tcc.slice %m offsets = [2] steps = [1] : tensor<32xf32> -> tensor<?xf32>
    %0 = tcc.mul %x, %s : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    return %0 : tensor<?xf32>
  }
}
