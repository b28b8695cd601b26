// RUN: tcc-opt %s --tcc-device-constants --verify-diagnostics

// Tests that a graph reading a mutable global is refused.
memref.global "private" @m : memref<4xf32> = dense<0.0>
func.func @main(%out: memref<4xf32>) {
  // expected-error@+1 {{not a dense constant}}
  %m = memref.get_global @m : memref<4xf32>
  return
}
