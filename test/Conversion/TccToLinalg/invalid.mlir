// RUN: tcc-opt %s --convert-tcc-to-linalg -split-input-file -verify-diagnostics

// Tests that a dynamic shape is reported, naming the fix.
func.func @dynamic(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'tcc.relu' op has a dynamic shape ('tensor<?x3xf32>'), which the CPU lowering does not support yet; fix the input shapes (--input-shape)}}
  %0 = tcc.relu %a : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

