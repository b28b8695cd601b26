// RUN: tcc-opt %s --allow-unregistered-dialect --tcc-test-build -split-input-file -verify-diagnostics

// What TccBuilder reports when an op cannot be built: the reason the op's
// inference or verifier gives, and nothing of the op left behind.

// Tests that operands that do not broadcast are refused by inference.
func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes 2x3, 4 do not broadcast (dimension 1: 3 vs 4)}}
  "test.build"(%a, %b) {op = "tcc.add"} : (tensor<2x3xf32>, tensor<4xf32>) -> ()
  return
}
// -----

// Tests that a matmul of mismatched inner dimensions is refused.
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{3 vs 4}}
  "test.build"(%a, %b) {op = "tcc.matmul"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> ()
  return
}
// -----

// Tests that a reduction over an axis the input lacks is refused.
func.func @reduce(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  "test.build"(%x) {op = "tcc.argmax", attrs = {axis = 2 : i64}} : (tensor<2x3xf32>) -> ()
  return
}
// -----

// Tests that a permutation of the wrong length is refused.
func.func @transpose(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm}}
  "test.build"(%x) {op = "tcc.transpose", attrs = {perm = array<i64: 0, 1, 2>}} : (tensor<2x3xf32>) -> ()
  return
}
// -----

// Tests that nll_loss names the shapes it needs.
func.func @nll(%x: tensor<2x5xf32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{input 2x5 and target 3 must be N x C x d... and N x d...}}
  "test.build"(%x, %t) {op = "tcc.nll_loss", attrs = {reduction = 2 : i32}} : (tensor<2x5xf32>, tensor<3xi64>) -> ()
  return
}
// -----

// Tests that a missing required attribute is reported, not assumed.
func.func @attribute(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{requires attribute 'perm'}}
  "test.build"(%x) {op = "tcc.transpose"} : (tensor<2x3xf32>) -> ()
  return
}
// -----

// Tests that an op whose constraints the operands break fails verification.
func.func @verifier(%x: tensor<3xi32>) {
  // expected-error @+1 {{'tcc.exp' op operand #0 must be ranked tensor of 16-bit float}}
  "test.build"(%x) {op = "tcc.exp"} : (tensor<3xi32>) -> ()
  return
}
// -----

// Tests that an op whose result shape is a choice needs it given.
func.func @needsTypes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tcc.reshape' needs its result types}}
  "test.build"(%x) {op = "tcc.reshape"} : (tensor<2x3xf32>) -> ()
  return
}
// -----

// Tests that an unknown op is reported.
func.func @unknown(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tcc.nope' is not an op of a loaded dialect}}
  "test.build"(%x) {op = "tcc.nope"} : (tensor<2x3xf32>) -> ()
  return
}
