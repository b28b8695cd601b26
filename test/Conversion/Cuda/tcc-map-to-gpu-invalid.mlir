// RUN: tcc-opt %s --tcc-map-to-gpu --verify-diagnostics --split-input-file

// Tests that a buffer outside the memory plan is refused: kernels cannot
// allocate.
func.func @unplanned(%a: memref<4xf32>) {
  // expected-error@+1 {{a buffer outside the memory plan}}
  %t = memref.alloc() : memref<4xf32>
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Tests that a value the host itself needs from device memory (a loop
// bound) is refused.
func.func @host_bound(%n: memref<index>, %a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  // expected-error@+1 {{the host would need a value read from device memory}}
  %bound = memref.load %n[] : memref<index>
  scf.parallel (%i) = (%c0) to (%bound) step (%c1) {
    memref.store %one, %a[%i] : memref<8xf32>
  }
  return
}
