// RUN: tcc-opt %s --tcc-map-to-gpu --verify-diagnostics

// Tests that a buffer outside the memory plan is refused: kernels cannot
// allocate.
func.func @unplanned(%a: memref<4xf32>) {
  // expected-error@+1 {{a buffer outside the memory plan}}
  %t = memref.alloc() : memref<4xf32>
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  return
}
