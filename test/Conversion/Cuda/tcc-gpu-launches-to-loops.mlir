// RUN: tcc-opt %s --tcc-gpu-launches-to-loops --split-input-file --verify-diagnostics | FileCheck %s

// Tests that a launch becomes loops over its blocks and its threads, the
// body run with the block and thread indices of each iteration and the
// block size where it read it.
// CHECK-LABEL: func.func @launch
// CHECK-NOT: gpu.launch
// CHECK: scf.for %[[B:.*]] = %c0 to %c4 step %{{.*}} {
// CHECK-NEXT: scf.for %[[T:.*]] = %c0 to %c256 step %{{.*}} {
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[B]], %c256 : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%[[I]]] : memref<1024xf32>
func.func @launch(%a: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    memref.store %one, %a[%i] : memref<1024xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a two-dimensional launch cannot be emulated.
func.func @two_dimensional(%a: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error@+1 {{only one-dimensional launches without shared memory can be emulated}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c4, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

// Tests that a kernel whose threads synchronize cannot be emulated.
func.func @barrier(%a: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-error@+1 {{a kernel that synchronizes its threads cannot be emulated}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}
